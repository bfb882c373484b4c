"""The elastic world of `bench.windows`: Sia's workloads in the elastic simulator, where a job's
GPUs, type and batch size change round by round, so its windows are cut from Sia's workload
lists (`refdata.sia`) rather than from a `Trace`.

On Sia's 64-GPU cluster (6 × 4 T4, 2 × 8 A100, 3 × 8 RTX 2080Ti), the same windows of Saturn
and Philly workload 1 under `sia`, ONES's exact policy (`ones`), ONES's own evolutionary search
(`ones_search`, the plain baseline with `ones`) and `elastic_max_goodput`; average and p99 JCT.

Windows hold 10 jobs at the small size (20 at full): a window is a whole elastic simulation
with a solve every 60-s round, its cost superlinear in the jobs, and 10 was fixed from the
cost of one probe window before the 20-window run (docs/WINDOWS.md).
"""

from __future__ import annotations

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

POLICIES = ("sia", "ones", "ones_search", "elastic_max_goodput")
BASE_GPUS = sum(sia.SIA_CLUSTER.gpus.values())  # 64; a size is a multiple of it
WORKLOADS = {"sia_saturn1": ("saturn", 1), "sia_philly1": ("philly", 1)}


def run_window(family: str, number: int, scale: int, window: Window, policy: str) -> dict[str, Any]:
    """One window of a Sia workload, rebased, under `policy` on Sia's cluster × `scale`
    (a module-level function: worker processes run it)."""
    from apportion.simulator.elastic.engine import simulate_elastic
    from apportion.simulator.elastic.ones import OnesSearch
    from apportion.simulator.elastic.policies import ApportionElastic

    jobs = sia.workload(family, number)
    chosen = pick(jobs, [j.time for j in jobs], window)
    part = [replace(j, time=j.time - window.start) for j in chosen]
    cluster = sia.SIA_CLUSTER.scaled(scale)
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


def measure(world: World) -> pd.DataFrame:
    from bench.windows import FULL

    labels, tasks = [], []
    for trace, (family, number) in WORKLOADS.items():
        arrivals = [j.time for j in sia.workload(family, number)]
        length = world.length[trace][1 if FULL else 0]
        for gpus in world.sizes[trace]:
            scale = gpus // BASE_GPUS
            for index, window in enumerate(windows_of(arrivals, length)):
                for policy in world.policies:
                    tasks.append((family, number, scale, window, policy))
                    labels.append(
                        {"world": world.name, "trace": trace, "gpus": gpus, "window": index}
                        | {"policy": policy, "jobs": window.jobs}
                    )
    pool = default_executor()
    rows: list[dict[str, Any]] = [{} for _ in tasks]
    try:
        futures = {pool.submit(_run, task): i for i, task in enumerate(tasks)}
        for done in as_completed(futures):
            i = futures[done]
            rows[i] = labels[i] | done.result()
            # each run as it ends: a long study keeps what it measured
            print(f"elastic run {rows[i]}", file=sys.stderr, flush=True)
    finally:
        pool.shutdown(cancel_futures=True)
    return pd.DataFrame(rows)


def elastic_world() -> World:
    return World(
        "elastic",
        {name: lambda gpus: sia.SIA_CLUSTER.scaled(gpus // BASE_GPUS) for name in WORKLOADS},
        {name: (BASE_GPUS,) for name in WORKLOADS},
        {name: (10, 20) for name in WORKLOADS},
        {policy: policy for policy in POLICIES},
        ("ones", "ones_search"),
        lambda result: {},
        "jct_h",
        runner=measure,
    )
