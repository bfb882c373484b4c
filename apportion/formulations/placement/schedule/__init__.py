"""The schedule objective of the contention placement (FORMULATIONS §7, "schedule"): a
placement policy that is also a scheduling policy. Each call decides who runs until the next
one, where, and whether a running job stays, moves or stops: priority-weighted GPUs (SRTF's or
LAS's order as lexicographic levels, `priority`) traded against the throughput contention
takes (`model`) and the cost of a restart. In pipeline order: `instance` (with `candidates`, who
is offered), `greedy` (the start), `model` and `start` (the MILP and the start as its point),
`search` (one solve within the time limit), `evaluate` and `report`.
"""

from __future__ import annotations

from apportion.formulations.placement.options import ContentionPlacementOptions
from apportion.formulations.placement.schedule.instance import build_schedule
from apportion.formulations.placement.schedule.report import schedule_outcome
from apportion.formulations.placement.schedule.search import solve_schedule
from apportion.solver.arrays import ClusterArrays
from apportion.solver.context import SolveContext
from apportion.solver.policy import Outcome
from apportion.solver.snapshot import Snapshot


def run_schedule(
    snapshot: Snapshot,
    problem: ClusterArrays,
    options: ContentionPlacementOptions,
    ctx: SolveContext,
) -> Outcome:
    inst = build_schedule(snapshot, options)
    restart = options.restart_seconds / options.horizon_seconds
    found = solve_schedule(inst, options.w1, restart, ctx)
    summary = {
        "w1": options.w1,
        "w2": 1.0 - options.w1,
        "objective_form": options.objective,
        "priority": options.priority,
        "restart_seconds": options.restart_seconds,
        "horizon_seconds": options.horizon_seconds,
    }
    return schedule_outcome(inst, problem, found, summary)
