"""The elastic world of `bench.windows`: Sia's workloads in the elastic simulator, where a job's
GPUs, type and batch size change round by round, so its windows are cut from Sia's workload
lists (`refdata.sia`) rather than from a `Trace`.

On Sia's 64-GPU cluster (6 × 4 T4, 2 × 8 A100, 3 × 8 RTX 2080Ti) and on its node layout
halved (`halved`: 3 × 4 T4, 1 × 8 A100, 2 × 8 RTX 2080Ti, 36 GPUs), the same windows of Saturn
and Philly workload 1 under `sia`, `elastic_max_goodput`, ONES's exact policy (`ones`) and
ONES's own evolutionary search (`ones_search`, the plain baseline with `ones`); average and
p99 JCT. The second size is the smaller one because the same windows then load every GPU
1.8× as much, where the policies' choices matter more than on a cluster twice Sia's.

Windows hold 10 jobs at the small size (20 at full): a window is a whole elastic simulation
with a solve every 60-s round, its cost superlinear in the jobs, and 10 was fixed from the
cost of one probe window before the 20-window run (docs/WINDOWS.md).

    python -m bench.windows_elastic --full --csv runs.csv   # every run's row as it ends
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from concurrent.futures import as_completed
from dataclasses import replace
from typing import Any

import pandas as pd

from apportion.refdata import sia
from apportion.simulator.sweep import default_executor
from apportion.simulator.windows import Window, pick
from bench.windows import World, windows_of

POLICIES = ("sia", "elastic_max_goodput", "ones", "ones_search")
WORKLOADS = {"sia_saturn1": ("saturn", 1), "sia_philly1": ("philly", 1)}


def halved(cluster: sia.ClusterSpec) -> sia.ClusterSpec:
    """Half of every type's nodes, rounded up: no type keeps less than half its GPUs, and
    every type keeps a node (Sia's 3 RTX nodes become 2, so that type still spans nodes)."""
    nodes = {gpu: -(-count // 2) for gpu, count in cluster.nodes.items()}
    return sia.ClusterSpec(nodes, cluster.gpus_per_node, cluster.max_nodes)


def _total(cluster: sia.ClusterSpec) -> int:
    return sum(cluster.gpus.values())


#: The world's sizes in GPUs, each Sia's node layout or a stated scaling of it; the more
#: loaded first, as the study runs them.
CLUSTERS = {_total(c): c for c in (halved(sia.SIA_CLUSTER), sia.SIA_CLUSTER)}


def run_window(family: str, number: int, gpus: int, window: Window, policy: str) -> dict[str, Any]:
    """One window of a Sia workload, rebased, under `policy` on the cluster of `gpus` GPUs in
    `CLUSTERS` (a module-level function: worker processes run it)."""
    from apportion.simulator.elastic.engine import simulate_elastic
    from apportion.simulator.elastic.ones import OnesSearch
    from apportion.simulator.elastic.policies import ApportionElastic

    jobs = sia.workload(family, number)
    chosen = pick(jobs, [j.time for j in jobs], window)
    part = [replace(j, time=j.time - window.start) for j in chosen]
    cluster = CLUSTERS[gpus]
    decider: Any = (
        OnesSearch(cluster, seed=0)
        if policy == "ones_search"
        else ApportionElastic(policy, cluster, {})
    )
    cpu = time.process_time()
    s = simulate_elastic(part, cluster, decider).summary
    return {
        "jct_h": s["jct_mean_hours"],
        "jct_p99_h": s["jct_p99_hours"],
        "unfinished": s["jobs"] - s["finished"],
        "wall_s": s["wall_seconds"],
        "cpu_s": time.process_time() - cpu,
    }


def _run(args: tuple[str, int, int, Window, str]) -> dict[str, Any]:
    return run_window(*args)


def tasks_of(world: World, full: bool) -> tuple[list[tuple[Any, ...]], list[dict[str, Any]]]:
    """Every run of `world` and its labels, size by size in the world's order, then window by
    window: window k of every workload and policy before window k + 1, so a study stopped
    early holds whole windows of the sizes it reached."""
    drawn = {}
    for trace, (family, number) in WORKLOADS.items():
        arrivals = [j.time for j in sia.workload(family, number)]
        drawn[trace] = windows_of(arrivals, world.length[trace][1 if full else 0])
    sizes = dict.fromkeys(gpus for trace in WORKLOADS for gpus in world.sizes[trace])
    tasks, labels = [], []
    for gpus in sizes:
        for index in range(max(len(w) for w in drawn.values())):
            for trace, (family, number) in WORKLOADS.items():
                window = drawn[trace][index]
                for policy in world.policies:
                    tasks.append((family, number, gpus, window, policy))
                    labels.append(
                        {"world": world.name, "trace": trace, "gpus": gpus, "window": index}
                        | {"policy": policy, "jobs": window.jobs}
                    )
    return tasks, labels


def append_row(path: str, row: dict[str, Any]) -> None:
    """`row` appended to the CSV file at `path`, under a header if the file is empty."""
    with open(path, "a", newline="") as sink:
        writer = csv.DictWriter(sink, list(row))
        if sink.tell() == 0:
            writer.writeheader()
        writer.writerow(row)


def measure(world: World, out: str | None = None) -> pd.DataFrame:
    """Every run of `world` in worker processes; each row is printed, and appended to the CSV
    file `out` if given (emptied first), as its run ends, so a long study keeps what it
    measured."""
    from bench.windows import FULL

    tasks, labels = tasks_of(world, FULL)
    if out:
        open(out, "w").close()
    pool = default_executor()
    rows: list[dict[str, Any]] = [{} for _ in tasks]
    try:
        futures = {pool.submit(_run, task): i for i, task in enumerate(tasks)}
        for done in as_completed(futures):
            i = futures[done]
            rows[i] = labels[i] | done.result()
            print(f"elastic run {rows[i]}", file=sys.stderr, flush=True)
            if out:
                append_row(out, rows[i])
    finally:
        pool.shutdown(cancel_futures=True)
    return pd.DataFrame(rows)


def elastic_world() -> World:
    return World(
        "elastic",
        {name: CLUSTERS.__getitem__ for name in WORKLOADS},
        {name: tuple(CLUSTERS) for name in WORKLOADS},
        {name: (10, 20) for name in WORKLOADS},
        {policy: policy for policy in POLICIES},
        ("ones", "ones_search"),
        lambda result: {},
        "jct_h",
        runner=measure,
    )


def main() -> None:
    from bench.windows import markdown, summarize

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--full", action="store_true", help="the full window length")
    parser.add_argument("--csv", default=None, help="every run's row, written as it ends")
    args = parser.parse_args()
    world = elastic_world()
    print(markdown(summarize(measure(world, args.csv), world)), flush=True)


if __name__ == "__main__":
    main()
