"""Small calls against the reference's own per-call code (issue 33), warm, best of `REPEATS`.

- FIFO: our policy pass (`fifo.run` on the snapshot's arrays, in Gavel's mode) against
  Gavel's performance-aware FIFO as the reference writes it: dictionaries of throughputs and
  scale factors keyed by its job-id objects (ordered and hashed by Python methods) in, a
  queue of job ids walked in Python, a dictionary allocation out, rebuilt on every call. Both
  must place the same jobs on the same types. Target ≤ 1× at 32, 256 and 1,024 jobs.
- Max-min fairness at 32 jobs: our whole `solve` (validation, the LPs, the result document)
  against the reference's LP as it writes it: cvxpy's `Maximize(min(sum(multiply(T·w·s, X))))`
  over a (jobs × types) variable with its base constraints, built and solved on every call
  (cvxpy's default solver here). Target ≤ 0.5×.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from apportion.formulations.objectives import fifo
from apportion.solver import solve
from apportion.solver.arrays import ClusterArrays
from apportion.solver.context import SolveContext
from apportion.solver.options import SolveOptions
from apportion.solver.snapshot import parse_snapshot
from bench.harness import Case, Row, best_of
from bench.objectives import gavel, with_arrivals

GROUP = "small calls"
REPEATS = 200
FIFO_TARGET = 1.0
MAX_MIN_TARGET = 0.5
MAX_MIN_REPEATS = 50


def warm_best(run: Callable[[], object], repeats: int = REPEATS) -> float:
    return best_of(run, repeats, warm=True)


class JobKey:
    """The reference's job id: an object ordered, compared and hashed by Python methods (a
    pair of ids when two jobs share a GPU; here always a single job)."""

    __slots__ = ("_hash", "first", "second")

    def __init__(self, first: int, second: int | None = None) -> None:
        self.first, self.second = first, second
        self._hash = first if second is None else first * first + first + second

    def __lt__(self, other: JobKey) -> bool:
        if other.second is not None:
            if self.second is None:
                return True
            if self.first == other.first:
                return self.second < other.second
        elif self.second is not None:
            return False
        return self.first < other.first

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, JobKey) and self.first == other.first and self.second == other.second
        )

    def __hash__(self) -> int:
        return self._hash

    def is_pair(self) -> bool:
        return self.second is not None


def reference_fifo_perf(
    throughputs: dict[JobKey, dict[str, float]],
    scale_factors: dict[JobKey, int],
    cluster_spec: dict[str, int],
) -> dict[JobKey, dict[str, float]]:
    """Gavel's performance-aware FIFO, per call, step for step: the cluster copied, the scale
    factors recorded, the allocation reset; jobs in id order (pairs skipped) each take the
    fastest of the sorted types with enough free workers; the queue stops at the first job
    that fits nowhere; a dictionary per job out."""
    available = copy.deepcopy(cluster_spec)
    recorded: dict[JobKey, int] = {}
    for job in scale_factors:
        recorded[job] = scale_factors[job]
    allocation: dict[JobKey, str] = {}
    queue = [job for job in sorted(throughputs) if job not in allocation and not job.is_pair()]
    types = sorted(t for t in available if available[t] > 0)
    while queue and types:
        job = queue.pop(0)
        scale = scale_factors[job]
        fitting, where = [], []
        for i, t in enumerate(types):
            if available[t] >= scale:
                fitting.append(t)
                where.append(i)
        if not fitting:
            break
        best, index, top = None, None, -1.0
        for i, t in enumerate(fitting):
            if throughputs[job][t] > top:
                top, best, index = throughputs[job][t], t, i
        assert best is not None and index is not None
        if throughputs[job][best] > 0.0:
            allocation[job] = best
            available[best] -= scale
            if available[best] == 0:
                types.pop(where[index])
    out = {job: {t: 0.0 for t in cluster_spec} for job in throughputs}
    for job, t in allocation.items():
        out[job][t] = 1.0
    return out


def fifo_row(case: Case) -> Row:
    snapshot = case.make()
    parsed = parse_snapshot(snapshot)
    problem = ClusterArrays.from_snapshot(parsed)
    options = fifo.FifoOptions(mode="gavel")
    ours = warm_best(
        lambda: fifo.run(parsed, problem, options, SolveContext.for_request(SolveOptions()))
    )
    # The reference's ids sort in arrival order: ours orders by arrival time, so the queue is
    # the same when the ids are numbered by arrival.
    order = np.argsort(problem.arrival_time, kind="stable")
    names = {int(j): JobKey(rank) for rank, j in enumerate(order)}
    throughputs = {
        names[j]: dict(zip(problem.gpu_names, row.tolist(), strict=True))
        for j, row in enumerate(problem.throughput)
    }
    scales = {names[j]: int(s) for j, s in enumerate(problem.scale_factor)}
    spec = {n: int(c) for n, c in zip(problem.gpu_names, problem.gpu_count, strict=True)}
    base = warm_best(lambda: reference_fifo_perf(throughputs, scales, spec))
    theirs = reference_fifo_perf(throughputs, scales, spec)
    mine = fifo.run(parsed, problem, options, SolveContext.for_request(SolveOptions()))
    same = all(
        theirs[names[j]][name] == mine.allocation[j, k]
        for j in range(problem.num_jobs)
        for k, name in enumerate(problem.gpu_names)
    )
    ratio = ours / base
    verdict = "yes" if ratio <= FIFO_TARGET else "NO"
    return _row(
        case,
        problem,
        ours,
        ratio,
        f"pass {ours * 1e3:.3f} ms vs the reference's per-call FIFO {base * 1e3:.3f} ms; "
        f"target ≤ {FIFO_TARGET:g}×: {verdict}; same allocation: {'yes' if same else 'NO'}",
    )


def reference_max_min(
    throughput: np.ndarray, scale: np.ndarray, weight: np.ndarray, counts: np.ndarray
) -> np.ndarray:
    """The reference's max-min LP, built and solved by cvxpy on every call."""
    import cvxpy as cp

    m, n = throughput.shape
    proportional = throughput @ counts / counts.sum()
    coefficient = throughput * (1.0 / weight / proportional)[:, None] * scale[:, None]
    x = cp.Variable((m, n))
    objective = cp.Maximize(cp.min(cp.sum(cp.multiply(coefficient, x), axis=1)))
    constraints = [
        x >= 0,
        cp.sum(x, axis=1) <= 1,
        cp.sum(cp.multiply(np.repeat(scale[:, None], n, axis=1), x), axis=0) <= counts,
    ]
    cp.Problem(objective, constraints).solve()
    return np.asarray(x.value).clip(0.0, 1.0)


def max_min_row(case: Case) -> Row:
    snapshot = case.make()
    problem = ClusterArrays.from_snapshot(parse_snapshot(snapshot))
    results: list[Any] = []
    args = (problem.throughput, problem.scale_factor, problem.weight, problem.gpu_count)
    ours_cpu, base_cpu = float("inf"), float("inf")
    # Alternately, so that both see the same load; wall and CPU seconds, best of each.
    ours, base = float("inf"), float("inf")
    for _ in range(MAX_MIN_REPEATS):
        wall, cpu = _timed(lambda: results.append(solve(snapshot, policy="max_min_fairness")))
        ours, ours_cpu = min(ours, wall), min(ours_cpu, cpu)
        wall, cpu = _timed(lambda: reference_max_min(*args))
        base, base_cpu = min(base, wall), min(base_cpu, cpu)
    ratio = ours / base
    verdict = "yes" if ratio <= MAX_MIN_TARGET else "NO"
    report = results[-1].solver
    return _row(
        case,
        problem,
        ours,
        ratio,
        f"solve {ours * 1e3:.2f} ms ({report.backend}, {report.solves} LP) vs the reference's "
        f"cvxpy LP {base * 1e3:.2f} ms; target ≤ {MAX_MIN_TARGET:g}×: {verdict}; CPU "
        f"{ours_cpu * 1e3:.2f} vs {base_cpu * 1e3:.2f} ms ({ours_cpu / base_cpu:.2f}×)",
        status=results[-1].status.value,
    )


def _timed(run: Callable[[], object]) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    run()
    return time.perf_counter() - wall, time.process_time() - cpu


def _row(
    case: Case,
    problem: ClusterArrays,
    total: float,
    ratio: float,
    note: str,
    status: str = "optimal",
) -> Row:
    return Row(
        case=case,
        jobs=problem.num_jobs,
        types=problem.num_types,
        validate=0.0,
        build=0.0,
        solve=total,
        total=total,
        objective=None,
        status=status,
        backend="",
        ratio=ratio,
        note=note,
    )


def cases() -> list[Case]:
    out = [
        Case(
            GROUP,
            f"fifo (gavel mode) vs the reference's per-call FIFO, {jobs:,} jobs",
            lambda n=jobs: with_arrivals(gavel(n), 6),
            "fifo",
            runner=fifo_row,
        )
        for jobs in (32, 256, 1_024)
    ]
    out.append(
        Case(
            GROUP,
            "max-min fairness vs the reference's cvxpy LP, 32 jobs",
            lambda: gavel(32),
            "max_min_fairness",
            runner=max_min_row,
        )
    )
    return out
