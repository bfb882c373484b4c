"""Gavel's own policies in Gavel's own simulator beside apportion's simulator under Gavel's
rules (`--resolve gavel --round-rule gavel`): average JCT and average wait before the first
start, per trace and policy. Target: average JCT within 3 % of Gavel's simulator.

    python -m bench.gavel_fidelity                      # ours, beside the recorded figures
    python -m bench.gavel_fidelity --gavel DIR          # ours, beside Gavel's code run now

DIR is a checkout of github.com/stanford-futuredata/gavel; its `scheduler/` simulator runs in a
subprocess of this interpreter (it needs cvxpy; its RPC and matrix-completion modules, unused
when simulating, are replaced by empty ones in a temporary directory). Without DIR the figures
are the ones recorded from such a run (`REFERENCE`, with the commit and solver).

Traces (1 GPU a server, as Gavel's simulator's default): Gavel's 96-job physical-cluster trace
on 8 V100 / 16 P100 / 24 K80, and two continuous traces made by Gavel's generator
(`scripts/utils/generate_trace.py --throughputs_file simulation_throughputs.json`), on 12 of
each type: `--num_jobs 300 -l 600 --seed 0` (one GPU each) and `--num_jobs 200 -l 1500
--seed 1 -m` (gangs of 1, 2 and 4).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

from apportion.refdata.gavel_runs import REFERENCE_RUNS
from apportion.simulator.config import Resolve, SimConfig
from apportion.simulator.engine import simulate
from apportion.simulator.sources import TraceSpec

DATA = Path(__file__).parent / "data"
TARGET = 0.03


class Workload(NamedTuple):
    name: str
    path: Path
    cluster: dict[str, int]


WORKLOADS = (
    Workload(
        "physical 96",
        REFERENCE_RUNS.parent / "gavel_max_min_fairness.trace",
        {"v100": 8, "p100": 16, "k80": 24},
    ),
    Workload(
        "continuous 300",
        DATA / "gavel_continuous_300.trace",
        dict.fromkeys(("v100", "p100", "k80"), 12),
    ),
    Workload(
        "multi-GPU 200",
        DATA / "gavel_multi_gpu_200.trace",
        dict.fromkeys(("v100", "p100", "k80"), 12),
    ),
)
#: Gavel's policy name → ours (Gavel's heterogeneity-agnostic max-min is `max_min_agnostic`).
POLICIES = {
    "max_min_fairness_perf": "max_min_fairness_perf",
    "fifo_perf": "fifo_perf",
    "max_min_fairness": "max_min_agnostic",
}
#: Gavel's simulator at c4fa40097339e9608ab71fd64c8bdea96a5e4a4c, seed 0, solved with
#: CLARABEL (ECOS, its default, was not installed): (average JCT, average wait) in seconds.
REFERENCE_COMMIT = "c4fa40097339e9608ab71fd64c8bdea96a5e4a4c (CLARABEL)"
REFERENCE: dict[tuple[str, str], tuple[float, float]] = {
    ("physical 96", "max_min_fairness_perf"): (14642.530, 812.845),
    ("physical 96", "fifo_perf"): (19526.854, 4120.437),
    ("physical 96", "max_min_fairness"): (19764.066, 674.167),
    ("continuous 300", "max_min_fairness_perf"): (9358.389, 1040.676),
    ("continuous 300", "fifo_perf"): (8964.175, 1040.930),
    ("continuous 300", "max_min_fairness"): (12952.337, 1040.629),
    ("multi-GPU 200", "max_min_fairness_perf"): (10064.867, 1043.957),
    ("multi-GPU 200", "fifo_perf"): (9437.525, 1048.530),
    ("multi-GPU 200", "max_min_fairness"): (13469.290, 950.774),
}

#: Gavel's agnostic max-min depends on its simulator's seed (the queues' random order each
#: round), and ours on `SimConfig.seed` likewise: average JCT over seeds 0–3, Gavel's / ours.
AGNOSTIC_SEEDS = {
    "physical 96": ((19731, 19838), (20099, 20275)),
    "continuous 300": ((12517, 12959), (12499, 13011)),
    "multi-GPU 200": ((13332, 13603), (13482, 13808)),
}

# Runs Gavel's `Scheduler.simulate` on a trace and prints its average JCT and the average wait
# from arrival to the first round a job is scheduled in, as JSON.
_DRIVER = """
import json, os, sys
gdir, trace, name, spec, solver = sys.argv[1:6]
sys.path.append(gdir)
import numpy as np
import scheduler, utils
jobs, arrivals = utils.parse_trace(trace)
policy = utils.get_policy(name, solver=solver, seed=0)
s = scheduler.Scheduler(policy, throughputs_file=os.path.join(gdir, 'simulation_throughputs.json'),
                        simulate=True, seed=0, time_per_iteration=360)
first = {}
schedule = s._schedule_jobs_on_workers
def watched():
    out = schedule()
    for pair in out:
        for one in pair.singletons():
            first.setdefault(one[0], s.get_current_timestamp())
    return out
s._schedule_jobs_on_workers = watched
counts = dict(zip(('v100', 'p100', 'k80'), (int(x) for x in spec.split(':'))))
s.simulate(counts, arrivals, jobs, num_gpus_per_server=dict.fromkeys(counts, 1))
jct = [t for t in s._job_completion_times.values() if t is not None]
waits = [first[i] - arrivals[i] for i in range(len(arrivals)) if i in first]
print(json.dumps({'jct': float(np.mean(jct)), 'wait': float(np.mean(waits))}))
"""
_EMPTY = (
    "matrix_completion.py",
    "runtime/__init__.py",
    "runtime/rpc/__init__.py",
    "runtime/rpc/scheduler_server.py",
    "runtime/rpc/scheduler_client.py",
)


#: Gavel's rules in apportion's simulator: its priority rule and re-solve triggers (its 360-s
#: rounds are the simulator's default).
GAVEL_RULES = SimConfig(resolve=Resolve.parse("gavel"), round_rule="gavel")


def ours(workload: Workload, policy: str) -> tuple[float, float]:
    """(average JCT, average wait) of apportion's simulator under Gavel's rules."""
    spec = TraceSpec("gavel", str(workload.path), cluster=workload.cluster, gpus_per_node=1)
    config = replace(GAVEL_RULES, policy=policy)
    summary = simulate(spec.load_trace(), config).summary
    return float(summary["jct_mean"]), float(summary["queueing_delay_mean"])


def solver() -> str:
    import cvxpy

    solvers = cvxpy.installed_solvers()  # type: ignore[no-untyped-call]
    return "ECOS" if "ECOS" in solvers else "CLARABEL"


def gavels(root: Path, workload: Workload, policy: str, stubs: Path) -> tuple[float, float]:
    """(average JCT, average wait) of Gavel's simulator, run from the checkout `root`."""
    spec = ":".join(str(workload.cluster[k]) for k in ("v100", "p100", "k80"))
    args = [str(root / "scheduler"), str(workload.path), policy, spec, solver()]
    done = subprocess.run(
        [sys.executable, "-c", _DRIVER, *args],
        capture_output=True,
        text=True,
        check=True,
        cwd=stubs,
        env={"PYTHONPATH": str(stubs), "PATH": "/usr/bin:/bin"},
    )
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    return figures["jct"], figures["wait"]


def table(root: Path | None) -> list[str]:
    source = f"Gavel's simulator at {root}" if root else f"recorded, Gavel @ {REFERENCE_COMMIT}"
    lines = [
        f"reference: {source}",
        f"{'trace':<15} {'Gavel policy':<22} {'ours JCT':>9} {'Gavel JCT':>9} {'diff':>7} "
        f"{'ours wait':>9} {'Gavel wait':>10}",
    ]
    with tempfile.TemporaryDirectory() as scratch:
        stubs = Path(scratch)
        for name in _EMPTY:
            (stubs / name).parent.mkdir(parents=True, exist_ok=True)
            (stubs / name).write_text("")
        for workload in WORKLOADS:
            for gavel, mine in POLICIES.items():
                jct, wait = ours(workload, mine)
                ref = (
                    gavels(root, workload, gavel, stubs)
                    if root
                    else REFERENCE[workload.name, gavel]
                )
                diff = jct / ref[0] - 1
                flag = "" if abs(diff) <= TARGET else "  (beyond 3 %)"
                lines.append(
                    f"{workload.name:<15} {gavel:<22} {jct:>9.0f} {ref[0]:>9.0f} {diff:>+7.1%} "
                    f"{wait:>9.0f} {ref[1]:>10.0f}{flag}"
                )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gavel", type=Path, help="a checkout of Gavel's repository")
    args = parser.parse_args()
    for line in table(args.gavel):
        print(line, flush=True)


if __name__ == "__main__":
    main()
