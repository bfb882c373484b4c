"""Fleet scale, the max-min level LP alone on contended clusters: the blocks backend's vertex
methods (its default for this LP: the market's prices, then the crossover; FORMULATIONS §1e)
beside its interior point (`solver="ipm"`, up to 100,000), on the same compiled model, at
10,000, 100,000 and 1,000,000 jobs × 8 types (`contended_columns`). Each row gives wall and
CPU seconds and the ratio to a 10,000,000-element numpy sort in the same process
(`bench.fleet.sort_seconds`). Both answers must be certified optimal, and their levels agree."""

from __future__ import annotations

import os
import resource
import time
from functools import partial

import numpy as np

from apportion.formulations.fairness.share_input import Entities, share_input
from apportion.formulations.fairness.share_lp import LevelState, build_share_lp
from apportion.refdata.synthetic import contended_columns
from apportion.solver.arrays import ClusterArrays
from apportion.solver.backends import Solution, SolveSettings
from apportion.solver.backends.blocks import BlocksBackend
from apportion.solver.model import CompiledModel
from apportion.solver.snapshot import parse_snapshot
from bench.fleet import GROUP, sort_seconds
from bench.harness import Case, Row

SIZES = (10_000, 100_000, 1_000_000)
#: The interior point beside it up to this size (at a million it took 78 iterations, 378 CPU s).
WITH_INTERIOR_POINT = 100_000


def level_model(case: Case) -> CompiledModel:
    snap = parse_snapshot(case.make())
    problem = ClusterArrays.from_snapshot(snap)
    entities = Entities.single(problem.num_jobs)
    s = share_input(snap, problem, problem.throughput, entities, merge=False).structure
    assert s is not None
    state = LevelState(
        s.weight.copy(), np.zeros(s.size), np.ones(1), np.ones(1, bool), np.zeros(s.size)
    )
    return build_share_lp(s, state, single=True)[0].compile()


def _timed(model: CompiledModel, solver: str | None) -> tuple[float, float, Solution]:
    cpu, wall = time.process_time(), time.perf_counter()
    solution = BlocksBackend().solve(model, SolveSettings(solver=solver))
    return time.perf_counter() - wall, time.process_time() - cpu, solution


def level_row(case: Case) -> Row:
    jobs = int(case.options["jobs"])
    sort_wall, sort_cpu = sort_seconds()
    model = level_model(case)
    load = "/".join(f"{v:.1f}" for v in os.getloadavg())
    wall, cpu, ours = _timed(model, None)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    other = "interior point not run at this size"
    if jobs <= WITH_INTERIOR_POINT:
        ipm_wall, ipm_cpu, ipm = _timed(model, "ipm")
        other = (
            f"interior point {ipm_wall:.2f} s wall, {ipm_cpu:.2f} s CPU "
            f"({ipm_cpu / sort_cpu:.1f}× the sort), {ipm.iterations} iterations, "
            f"{ipm.status.value}, level {ipm.objective}"
        )
    return Row(
        case=case,
        jobs=jobs,
        types=8,
        validate=0.0,
        build=ours.build_seconds,
        solve=ours.solve_seconds,
        total=wall,
        objective=ours.objective,
        status=ours.status.value,
        backend=f"{ours.backend}/{ours.solver}",
        ratio=wall / sort_wall,
        note=f"CPU {cpu:.2f} s ({cpu / sort_cpu:.1f}× the sort's {sort_cpu:.2f} s CPU); "
        f"{other}; peak RSS {rss:.2f} GB; load {load}; {ours.detail[:160]}",
    )


def cases() -> list[Case]:
    return [
        Case(
            GROUP,
            f"max-min level LP, {jobs:,} contended jobs × 8 types, blocks vertex vs interior point",
            partial(contended_columns, jobs, 8, seed=1),
            "max_min_fairness",
            options={"jobs": jobs},
            runner=level_row,
        )
        for jobs in SIZES
    ]
