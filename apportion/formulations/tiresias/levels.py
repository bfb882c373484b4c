"""The admission MILP's objective levels, solved in turn (`admission` states them).

Each level maximizes whole-number weights over the columns, starts from the best decision so
far, and, once solved, is held at its optimum by a row (≥ value − ½: the values are whole) while
the later levels are solved. A level stopped by the time limit keeps its best decision and ends
the sequence: the answer is then `feasible`, not `optimal`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

from apportion.formulations.tiresias.admission import Columns, build
from apportion.formulations.tiresias.greedy import Decision, node_free
from apportion.formulations.tiresias.instance import FloatArray, Instance, IntArray
from apportion.formulations.tiresias.placing import into_holes, take
from apportion.formulations.tiresias.queues import Queues
from apportion.solver.backends import Solution
from apportion.solver.context import SolveContext, SolveRequest
from apportion.solver.model import Block
from apportion.solver.status import Status


@dataclass
class Solved:
    """The decision and how the levels went."""

    decision: Decision
    status: Status
    solution: Solution | None = None
    levels: list[str] = field(default_factory=list)  # each level: solved, settled or stopped
    gap: float | None = None


def admit(
    inst: Instance,
    queues: Queues,
    start: Decision,
    max_preemptions: int | None,
    ctx: SolveContext,
) -> Solved:
    jobs = np.flatnonzero(inst.schedulable)
    cols = build(inst, jobs, max_preemptions)
    best = start
    out = Solved(start, Status.OPTIMAL)
    for name, weights, settled in _levels(inst, queues, jobs):
        cost = np.asarray(cols.runs.T @ weights).ravel() if weights is not None else None
        if cost is None:  # the preemption level weighs the keep columns directly
            cost = np.zeros(cols.model.num_cols)
            cost[cols.keep.span] = np.ceil(inst.cost[cols.keep_job])
        reached = float(cost @ cols.start_point(inst, best)[1])
        if settled(best):
            out.levels.append(f"{name}: settled")
        else:
            cols.model.set_objective(_split(cols, cost), cols.model.sense)
            solution = ctx.solve(
                SolveRequest(cols.model, mip_gap=0.0, start=cols.start_point(inst, best))
            )
            out.solution = solution
            if not solution.status.has_solution:
                out.levels.append(f"{name}: {solution.status.value}")
                out.status = Status.FALLBACK if best is start else Status.FEASIBLE
                break
            best = decode(inst, cols, solution.x)
            reached = float(cost @ solution.x)
            if solution.status is not Status.OPTIMAL:
                out.levels.append(f"{name}: stopped")
                out.status, out.gap = Status.FEASIBLE, solution.mip_gap
                break
            out.levels.append(f"{name}: solved")
        rows = {b: w[None, :] for b, w in _split(cols, cost).items()}
        cols.model.add_constraints(f"hold_{name}", rows, lower=reached - 0.5)
    out.decision = best
    return out


def _split(cols: Columns, vector: FloatArray) -> dict[Block, FloatArray]:
    """A vector over every column, as the model's blocks take it."""
    return {b: vector[b.span] for b in cols.model.variables if b.size}


Level = tuple[str, FloatArray | None, Callable[[Decision], bool]]


def _levels(inst: Instance, queues: Queues, jobs: IntArray) -> Iterator[Level]:
    """(name, weights per job or None for the preemption level, whether a decision is
    already optimal for it without a solve)."""
    queue = queues.queue
    for q in range(queues.count):
        member = np.zeros(inst.num_jobs)
        member[jobs[queue[jobs] == q]] = 1.0
        if member.any():
            yield f"queue_{q + 1}", member, _all_of(member)
    if (inst.cost[jobs] > 0).any():
        yield "preemption", None, lambda d: not (inst.running & ~d.kept)[jobs].any()
    size = np.bincount(queue[jobs], minlength=queues.count)
    weight = np.zeros(inst.num_jobs)
    weight[jobs] = size[queue[jobs]] - queues.rank[jobs]
    yield "priority", weight, lambda d: bool(d.runs[jobs].all())


def _all_of(member: FloatArray) -> Callable[[Decision], bool]:
    def every(d: Decision) -> bool:
        return bool(d.runs[member > 0].all())

    return every


def decode(inst: Instance, cols: Columns, x: FloatArray) -> Decision:
    """The decision a solution stands for: sensitive gangs where the model put them, the rest
    into the smallest holes the kept and consolidated jobs leave, largest gang first."""
    on = np.round(x).astype(np.int64)
    kept = np.zeros(inst.num_jobs, dtype=bool)
    kept[cols.keep_job[on[cols.keep.span] > 0]] = True
    decision = Decision(kept)
    free = node_free(inst, kept)
    gpus = on[cols.pieces.span]
    for row in np.flatnonzero(on[cols.sens.span] > 0).tolist():
        j, k = int(cols.sens_job[row]), int(cols.sens_type[row])
        mine = (cols.piece_of == row) & (gpus > 0)
        pieces = {int(n): int(g) for n, g in zip(cols.piece_node[mine], gpus[mine], strict=True)}
        decision.started[j] = (k, pieces)
        take(free, pieces)
    chosen = np.flatnonzero(on[cols.start.span] > 0)
    for row in chosen[np.argsort(-inst.gang[cols.start_job[chosen]], kind="stable")].tolist():
        j, k = int(cols.start_job[row]), int(cols.start_type[row])
        found = into_holes(free, np.flatnonzero(inst.node_type == k), int(inst.gang[j]))
        if found is None:  # cannot happen: the type row counted these GPUs
            raise AssertionError(f"job {inst.job_ids[j]}: no GPUs left on its type")
        decision.started[j] = (k, found)
        take(free, found)
    return decision
