"""Per-call speed against Gavel's own policy code (issue 45): Gavel's performance-aware FIFO
(`fifo_perf`, `FIFOPolicyWithPerf`) and its heterogeneity-aware max-min fairness
(`max_min_fairness_perf`, `MaxMinFairnessPolicyWithPerf`), imported from a checkout of
github.com/stanford-futuredata/gavel, against apportion's library call end to end
(`solve(snapshot, policy=...)`: validation, the pass or the LPs, the result document).

    python -m bench.gavel_policies --gavel DIR [--processes 6] [--calls 200]
        [--case POLICY:JOBS ...] [--layout list|columns|parsed ...]

Without `--gavel` nothing is measured (the bench says it was skipped): every figure here is
Gavel's code timed, never a re-implementation of it.

Inputs are identical: one snapshot (`bench.objectives.gavel`: Gavel's job types, scale factors
1–8, weights; FIFO with arrivals), and for Gavel the same throughputs, scale factors, priority
weights and cluster as its dictionaries keyed by its `JobIdPair`s numbered in arrival order,
built before timing. Ours is timed three ways (`LAYOUTS`): the decoded JSON document with the
jobs as a list or as columns, validated on every call, and a snapshot validated before timing.
Each side runs in its own subprocess (so neither inherits the other's caches or imports), the
two alternating `--processes` times; each process makes a warm-up call and then `--calls` calls
timed in CPU seconds (`time.process_time`), and keeps its median. The table gives, per case,
the best median of each side over its processes and the ratio. Max-min is solved by Gavel's
code with CLARABEL (its default, ECOS, when installed). Both sides' answers are checked to
agree: FIFO the same type per job; max-min the same minimum normalized share within 1e-4
relative. `--case` and `--layout` run only some rows. Measured figures:
docs/contributors/bench.md."""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.objectives import gavel, with_arrivals

#: (case name, policy, jobs, target ratio ours / Gavel's).
CASES = (
    ("fifo_perf", "fifo", 32, None),
    ("fifo_perf", "fifo", 256, 1.0),
    ("fifo_perf", "fifo", 1_024, 1.0),
    ("max_min_fairness_perf", "max_min_fairness", 32, 0.5),
)
#: How our side is given the snapshot: a decoded JSON document with the jobs as a list of
#: objects or as columns (validated on every call), or a `Snapshot` validated once before
#: timing (a scheduler's own state, as Gavel's policies are handed theirs).
LAYOUTS = ("list", "columns", "parsed")


def snapshot(policy: str, jobs: int) -> dict[str, Any]:
    made = gavel(jobs)
    return with_arrivals(made, 6) if policy == "fifo" else made


def as_columns(document: dict[str, Any]) -> dict[str, Any]:
    """The document with its jobs as columns (numpy arrays; every job gives every field)."""
    jobs = document["jobs"]
    names = [g["name"] for g in document["gpu_types"]]
    columns: dict[str, Any] = {"id": [job["id"] for job in jobs]}
    for field in ("scale_factor", "weight", "arrival_time", "steps_remaining"):
        if all(field in job for job in jobs):
            columns[field] = np.array([job[field] for job in jobs])
    columns["throughput"] = {
        name: np.array([job["throughput"].get(name, 0.0) for job in jobs]) for name in names
    }
    return {**document, "jobs": columns}


def _given(document: dict[str, Any], layout: str) -> Any:
    from apportion.solver.snapshot import parse_snapshot

    if layout == "list":
        return document
    columns = as_columns(document)
    return columns if layout == "columns" else parse_snapshot(columns)


def _ours(case: dict[str, Any], calls: int, layout: str) -> tuple[list[float], Any]:
    from apportion.solver import solve

    policy, document = case["policy"], case["snapshot"]
    given = _given(document, layout)
    options = {"mode": "gavel"} if policy == "fifo" else {}
    result = solve(given, policy=policy, options=options)  # warm-up
    times = []
    for _ in range(calls):
        started = time.process_time()
        result = solve(given, policy=policy, options=options)
        times.append(time.process_time() - started)
    ids = [job["id"] for job in document["jobs"]]
    by_id = {job.id: job for job in result.jobs}
    if policy == "fifo":
        answer: Any = [_type_of(by_id[i].allocation) for i in ids]
    else:
        answer = min(by_id[i].normalized_share or 0.0 for i in ids)
    return times, answer


def _type_of(allocation: dict[str, float]) -> str | None:
    held = [name for name, value in allocation.items() if value >= 0.5]
    return held[0] if held else None


def _gavels(case: dict[str, Any], calls: int, root: str) -> tuple[list[float], Any]:
    sys.path[:0] = [f"{root}/scheduler", f"{root}/scheduler/policies"]
    import cvxpy
    from job_id_pair import JobIdPair

    document, policy = case["snapshot"], case["policy"]
    order = np.argsort([job.get("arrival_time", 0.0) for job in document["jobs"]], kind="stable")
    key = {int(j): JobIdPair(rank, None) for rank, j in enumerate(order)}
    spec = {t["name"]: int(t["count"]) for t in document["gpu_types"]}
    jobs = document["jobs"]
    throughputs = {
        key[j]: {t: float(job["throughput"].get(t, 0.0)) for t in spec}
        for j, job in enumerate(jobs)
    }
    scales = {key[j]: int(job.get("scale_factor", 1)) for j, job in enumerate(jobs)}
    weights = {key[j]: float(job.get("weight", 1.0)) for j, job in enumerate(jobs)}
    if policy == "fifo":
        from fifo import FIFOPolicyWithPerf

        chosen = FIFOPolicyWithPerf()

        def call() -> Any:
            return chosen.get_allocation(throughputs, scales, spec)
    else:
        from max_min_fairness import MaxMinFairnessPolicyWithPerf

        solvers = cvxpy.installed_solvers()  # type: ignore[no-untyped-call]
        chosen = MaxMinFairnessPolicyWithPerf("ECOS" if "ECOS" in solvers else "CLARABEL")

        def call() -> Any:
            return chosen.get_allocation(throughputs, scales, weights, spec)

    allocation = call()  # warm-up
    times = []
    for _ in range(calls):
        started = time.process_time()
        allocation = call()
        times.append(time.process_time() - started)
    if policy == "fifo":
        answer: Any = [_type_of(allocation[key[j]]) for j in range(len(jobs))]
    else:
        answer = _gavel_min_share(allocation, throughputs, scales, weights, spec, key, len(jobs))
    return times, answer


def _gavel_min_share(
    allocation: Any, throughputs: Any, scales: Any, weights: Any, spec: Any, key: Any, m: int
) -> float:
    """Gavel's objective on its answer, in our terms: min_j Σ_k T_jk s_j x_jk / (w_j · its
    throughput on an equal share of the cluster)."""
    total = sum(spec.values())
    shares = []
    for j in range(m):
        k = key[j]
        equal = sum(throughputs[k][t] * spec[t] for t in spec) / total
        rate = sum(throughputs[k][t] * allocation[k][t] for t in spec) * scales[k]
        shares.append(rate / (weights[k] * equal))
    return float(min(shares))


def child(side: str, path: str, calls: int, root: str) -> None:
    case = json.loads(Path(path).read_text())
    if side == "gavel":
        times, answer = _gavels(case, calls, root)
    else:
        times, answer = _ours(case, calls, side.removeprefix("ours-"))
    print(json.dumps({"median": statistics.median(times), "answer": answer}))


def _spawn(side: str, path: Path, calls: int, root: Path) -> dict[str, Any]:
    command = [sys.executable, "-m", "bench.gavel_policies", "--child", side, str(path)]
    command += ["--calls", str(calls), "--gavel", str(root)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    loaded: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


def _agree(policy: str, ours: Any, theirs: Any) -> bool:
    if policy == "fifo":
        return bool(ours == theirs)
    return bool(abs(ours - theirs) <= 1e-4 * max(abs(theirs), 1e-12))


def table(
    root: Path,
    processes: int,
    calls: int,
    only: list[str] | None = None,
    layouts: tuple[str, ...] = LAYOUTS,
) -> list[str]:
    lines = [
        f"Gavel's code at {root}; CPU seconds per call, median of {calls} calls, best of "
        f"{processes} alternating processes per side",
        f"{'case':<22} {'ours as':<8} {'jobs':>6} {'ours ms':>9} {'Gavel ms':>9} {'ratio':>7} "
        f"{'target':>7}  agree",
    ]
    with tempfile.TemporaryDirectory() as scratch:
        for name, policy, jobs, target in CASES:
            if only and f"{policy}:{jobs}" not in only:
                continue
            path = Path(scratch) / f"{name}_{jobs}.json"
            path.write_text(json.dumps({"policy": policy, "snapshot": snapshot(policy, jobs)}))
            sides = [f"ours-{layout}" for layout in layouts] + ["gavel"]
            best = dict.fromkeys(sides, float("inf"))
            answers: dict[str, Any] = {}
            for _ in range(processes):
                for side in sides:
                    got = _spawn(side, path, calls, root)
                    best[side] = min(best[side], got["median"])
                    answers[side] = got["answer"]
            for layout in layouts:
                mine = best[f"ours-{layout}"]
                ratio = mine / best["gavel"]
                goal = f"≤ {target:g}×" if target else ""
                mark = "" if target is None or ratio <= target else "  NOT MET"
                same = _agree(policy, answers[f"ours-{layout}"], answers["gavel"])
                lines.append(
                    f"{name:<22} {layout:<8} {jobs:>6,} {mine * 1e3:>9.3f} "
                    f"{best['gavel'] * 1e3:>9.3f} {ratio:>6.2f}× {goal:>7}  "
                    f"{'yes' if same else 'NO'}{mark}"
                )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gavel", type=Path, help="a checkout of Gavel's repository")
    parser.add_argument("--processes", type=int, default=6)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument(
        "--case", action="append", help="only this case, as POLICY:JOBS (e.g. fifo:256)"
    )
    parser.add_argument("--layout", action="append", choices=LAYOUTS, help="only this layout")
    parser.add_argument("--child", nargs=2, metavar=("SIDE", "CASE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1], args.calls, str(args.gavel))
        return
    if args.gavel is None:
        print("gavel_policies: skipped, no checkout of Gavel's repository given (--gavel DIR)")
        return
    layouts = tuple(args.layout) if args.layout else LAYOUTS
    for line in table(args.gavel.resolve(), args.processes, args.calls, args.case, layouts):
        print(line, flush=True)


if __name__ == "__main__":
    main()
