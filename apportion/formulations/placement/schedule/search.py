"""Solving the schedule MILP: from the greedy schedule (`greedy`: running jobs where they run,
then the best starts one by one), one solve within the request's limits, the answer read back,
checked and scored from its definition. Every stage watches the time limit: once it is spent
(during the greedy, or before the solve could read its limit) the greedy schedule as far as it
got is the answer, status `fallback`, termination `time_limit`. Running jobs stay where the
previous answer put them, so a caller that asks at every event warm-starts every call from its
last answer.

The gap is tight by default (1e-7): the lexicographic levels put the lowest level's GPUs many
orders of magnitude below the highest's, and the default 1e-4 would leave its choices unmade.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from apportion.formulations.placement.schedule.evaluate import Decision, Scored, score
from apportion.formulations.placement.schedule.greedy import greedy_start
from apportion.formulations.placement.schedule.instance import ScheduleInstance
from apportion.formulations.placement.schedule.model import Built, build
from apportion.formulations.placement.schedule.start import start_vector
from apportion.formulations.placement.tuning import HIGHS_OPTIONS, too_big_for
from apportion.solver.arraytypes import FloatArray
from apportion.solver.backends import Solution
from apportion.solver.context import SolveContext, SolveRequest
from apportion.solver.status import Status, Termination

GAP = 1e-7
#: Rows from which HiGHS's presolve is off: it reads the time limit only between passes, and a
#: pass over such a model outlasted a 6-s limit by 20 s (probing 65 s for 1 s at 256 nodes).
LARGE = 100_000
#: What the solve may take of the time left (the rest reads, checks and reports its answer), and
#: what a large model may take, whose setup overruns.
SOLVE_SHARE, LARGE_SHARE = 0.9, 0.5


@dataclass
class Found:
    status: Status
    decision: Decision
    scored: Scored
    solution: Solution | None = None
    gap: float | None = None
    problems: tuple[str, ...] = ()
    termination: Termination | None = None  # why the search stopped, where no solve says
    detail: str | None = None


def solve_schedule(inst: ScheduleInstance, w1: float, restart: float, ctx: SolveContext) -> Found:
    start, cut = greedy_start(inst, w1, ctx.budget)
    start_score = score(inst, start, w1, restart)
    if not inst.choices.size:
        return Found(Status.OPTIMAL, start, start_score)
    if cut or ctx.budget.spent():
        why = "the time limit came during the greedy" if cut else "the greedy used up the time"
        return _timed_out(start, start_score, why, ctx.budget.termination, complete=not cut)
    built = build(inst, w1, restart)
    large = built.model.num_rows >= LARGE
    if too_big_for(ctx.budget, built.model.num_rows):
        # HiGHS would overrun what is left before it even reads the limit.
        return _timed_out(
            start, start_score, "the model is too large for the time left", ctx.budget.termination
        )
    solution = ctx.solve(
        SolveRequest(
            built.model,
            mip_gap=GAP,
            start=start_vector(inst, built, start),
            tuning={"highs": {**HIGHS_OPTIONS, "presolve": "off"} if large else HIGHS_OPTIONS},
            time_limit=ctx.budget.share(LARGE_SHARE if large else SOLVE_SHARE),
        )
    )
    if not solution.status.has_solution:
        if solution.status is Status.NO_SOLUTION and solution.termination.is_limit:
            return Found(Status.FALLBACK, start, start_score, solution)
        return Found(solution.status, start, start_score, solution)
    decision = decode(inst, built, solution.x)
    problems = check(inst, decision)
    if problems:
        return Found(Status.ERROR, start, start_score, solution, problems=tuple(problems))
    found = score(inst, decision, w1, restart)
    if found.objective < start_score.objective - 1e-9:  # a limit stopped it below its start
        return Found(Status.FALLBACK, start, start_score, solution, solution.mip_gap)
    return Found(solution.status, decision, found, solution, solution.mip_gap)


def _timed_out(
    start: Decision, scored: Scored, why: str, termination: Termination, complete: bool = True
) -> Found:
    """The greedy schedule (whole, or as far as it got), answered for the time limit."""
    detail = f"{why}: the greedy schedule" + ("" if complete else " as far as it got")
    return Found(Status.FALLBACK, start, scored, termination=termination, detail=detail)


def decode(inst: ScheduleInstance, built: Built, x: FloatArray) -> Decision:
    v = np.rint(x[built.v.span]) > 0
    w = np.rint(x[built.w.span]) > 0
    decision: Decision = {}
    for o in np.flatnonzero(v).tolist():
        position = int(inst.choices.job[o])
        if inst.choices.stay[o]:
            nodes = inst.held[position][0].tolist()
        else:
            nodes = built.pair_node[(built.pair_choice == o) & w].tolist()
        decision[position] = (o, nodes)
    return decision


def check(inst: ScheduleInstance, decision: Decision) -> list[str]:
    """Independent of the model: each job on as many nodes as its shape says, no node over its
    GPUs, a running job that may not move where it was."""
    ch = inst.choices
    load = np.zeros(len(inst.node_ids), dtype=np.int64)
    problems = []
    for position, (o, nodes) in decision.items():
        name = inst.job_ids[inst.index[position]]
        if ch.job[o] != position:
            problems.append(f"{name} runs with another job's choice")
        if ch.stay[o]:
            held_nodes, gpus = inst.held[position]
            load[held_nodes] += gpus
            continue
        if len(set(nodes)) != ch.nodes[o]:
            problems.append(f"{name} uses {len(set(nodes))} nodes, its shape {ch.nodes[o]}")
        load[nodes] += ch.per_node[o]
    problems += [
        f"node {inst.node_ids[n]} over its GPUs" for n in np.flatnonzero(load > inst.node_gpus)
    ]
    if inst.moves == "none":
        kept = {p for p, (o, _) in decision.items() if ch.stay[o]}
        problems += [
            f"{inst.job_ids[inst.index[p]]} moved or stopped, but moves are none"
            for p in np.flatnonzero(inst.running).tolist()
            if p not in kept
        ]
    return problems
