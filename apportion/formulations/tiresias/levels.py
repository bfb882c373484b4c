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
from apportion.formulations.tiresias.instance import Instance
from apportion.formulations.tiresias.placing import into_holes, take
from apportion.formulations.tiresias.queues import Queues
from apportion.solver.arraytypes import FloatArray, IntArray
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
    best = start
    out = Solved(start, Status.OPTIMAL)
    stages = _stages(list(_levels(inst, queues, jobs)))
    if all(settled(start) for _, _, settled in stages):
        out.levels = [f"{name}: settled" for name, _, _ in stages]
        return out
    cols = build(inst, jobs, max_preemptions)
    for name, weights, settled in stages:
        cost = np.asarray(cols.runs.T @ weights).ravel()
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


#: (name, whole-number weight per job on its run indicator, whether a decision already
#: reaches the level's optimum).
Level = tuple[str, FloatArray, Callable[[Decision], bool]]
#: Levels are merged into one objective while its largest value stays below this: whole
#: numbers that size are exact in the solver's arithmetic and its zero gap.
MERGE_LIMIT = 1e6


def _levels(inst: Instance, queues: Queues, jobs: IntArray) -> Iterator[Level]:
    queue = queues.queue
    for q in range(queues.count):
        member = np.zeros(inst.num_jobs)
        member[jobs[queue[jobs] == q]] = 1.0
        if member.any():
            yield f"queue_{q + 1}", member, _all_of(member)
    paid = np.where(inst.running, inst.cost, 0.0)
    paid[np.setdiff1d(np.arange(inst.num_jobs), jobs)] = 0.0
    if paid.any():
        # Keeping a job saves its cost: maximize Σ c_r x_r, in whole units (`whole_costs`).
        paid = whole_costs(paid)
        yield "preemption", paid, lambda d: not (inst.running & ~d.kept)[jobs].any()
    size = np.bincount(queue[jobs], minlength=queues.count)
    weight = np.zeros(inst.num_jobs)
    weight[jobs] = size[queue[jobs]] - _rank_among(queue, queues.rank, jobs)
    yield "priority", weight, lambda d: bool(d.runs[jobs].all())


#: The finest decimal a preemption cost is counted in (GPU-seconds): 10^-DECIMALS.
DECIMALS = 6


def whole_costs(costs: FloatArray) -> FloatArray:
    """Costs as whole numbers with the same order of every sum: scaled by the least power of
    ten that makes them whole (they are rounded at 10^-DECIMALS past that), then divided by
    their greatest common divisor. Rounding them up instead would tie 2.2 with 2.5."""
    for digits in range(DECIMALS + 1):
        scaled = costs * 10.0**digits
        if np.allclose(scaled, np.round(scaled), rtol=1e-12, atol=1e-9):
            break
    whole = np.round(scaled).astype(np.int64)
    unit = int(np.gcd.reduce(whole[whole > 0])) if (whole > 0).any() else 1
    return np.asarray(whole // unit, dtype=float)


def _rank_among(queue: IntArray, rank: IntArray, jobs: IntArray) -> IntArray:
    """Each of `jobs`' place within its queue counting only `jobs`: a job that fits nowhere
    takes no place, so every weight n_q − rank stays positive (a negative one would let a
    later level outweigh an earlier one)."""
    order = jobs[np.lexsort((rank[jobs], queue[jobs]))]
    q = queue[order]
    local = np.empty(queue.size, dtype=np.int64)
    local[order] = np.arange(order.size) - np.searchsorted(q, q, side="left")
    out: IntArray = local[jobs]
    return out


def _stages(levels: list[Level]) -> list[Level]:
    """Consecutive levels merged into one weighted objective while it stays exact: a level
    is weighted by one more than the most every later level of its stage can add."""
    stages: list[Level] = []
    group: list[Level] = []
    for level in [*levels, ("", np.zeros(0), lambda d: True)]:
        trial = [*group, level]
        if level[0] and _magnitude(trial) <= MERGE_LIMIT:
            group = trial
            continue
        if group:
            stages.append(_merge(group))
        group = [level]
    return stages


def _scales(group: list[Level]) -> list[float]:
    scales = [1.0]
    for _, weights, _ in reversed(group[1:]):
        scales.insert(0, scales[0] * (float(weights.sum()) + 1.0))
    return scales


def _magnitude(group: list[Level]) -> float:
    return sum(s * float(w.sum()) for s, (_, w, _) in zip(_scales(group), group, strict=True))


def _merge(group: list[Level]) -> Level:
    if len(group) == 1:
        return group[0]
    weights = sum(s * w for s, (_, w, _) in zip(_scales(group), group, strict=True))
    checks = [settled for _, _, settled in group]
    name = "+".join(name for name, _, _ in group)
    return name, np.asarray(weights, dtype=float), lambda d: all(c(d) for c in checks)


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
