"""The search for the best placement: a first incumbent (`start`), the pooled rounds
(`rounds`) where they apply, then the per-candidate model (`per_candidate`) with its
worst-co-runner rows between candidates added lazily.

Lazy rows: the model first prices only contention involving running jobs. Leaving rows out only
lowers the c's, so each model is a relaxation and its bound is valid for the full problem. If the
placement it returns co-locates candidates whose pair was left out and that pair hurts more than
the running jobs already do, the pairs are added (for every node) and the model is solved again
from that placement. When no such pair remains, the placement is optimal for the full model. In
practice the optimum rarely co-locates sensitive candidates, so one or two solves suffice, and
each is much smaller than the full model.

Pooled first: when single-node jobs are free of contention (DeepShare's scope) and the penalty is
the worst co-runner, the start is the better of the greedy placement and a linear estimate's
(`estimate`, a small packing MILP), and the pooled relaxation (`pooled`, no per-candidate copies)
is solved first, with the same lazy pairs, each round warm-started from the best placement so
far. Once the best placement evaluated so far is within the gap tolerance of its bound, that
placement is optimal and the per-candidate model is never built. Otherwise the per-candidate
model takes over from the best placement and the pairs found, and the final gap uses the better
of both bounds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from apportion.formulations.placement.answer import PlacementAnswer, check_feasible
from apportion.formulations.placement.evaluate import evaluate
from apportion.formulations.placement.instance import Instance, Started
from apportion.formulations.placement.model import canonical
from apportion.formulations.placement.options import ContentionPlacementOptions
from apportion.formulations.placement.per_candidate import build, decode, start_vector
from apportion.formulations.placement.rounds import pooled_rounds, worth_starting
from apportion.formulations.placement.start import first_incumbent
from apportion.formulations.placement.tuning import HIGHS_OPTIONS, too_big_for
from apportion.formulations.placement.worst import unmodeled_pairs
from apportion.solver.arraytypes import BoolArray
from apportion.solver.backends import Solution
from apportion.solver.context import SolveContext, SolveRequest, TimeBudget
from apportion.solver.status import Status, Termination, relative_gap

SHARE_LEFT = 0.1  # the per-candidate model starts only with this share of a limit left


@dataclass
class _Incumbent:
    """The best placement so far, its value, and what the pooled rounds learned."""

    greedy: Started  # the greedy placement: answering with it is a fallback
    started: Started
    value: float
    rounds: int = 0
    bound: float | None = None  # the pooled rounds' bound, valid for the full problem

    @property
    def found(self) -> Status:
        """`fallback` when the best placement is still the greedy one, else `feasible`."""
        return Status.FALLBACK if self.started is self.greedy else Status.FEASIBLE


def solve(
    inst: Instance, options: ContentionPlacementOptions, ctx: SolveContext
) -> PlacementAnswer:
    """The best placement within the options' limits, starting from the greedy one (or, under
    DeepShare's scope, the estimate's when it scores better)."""
    lazy = options.penalty == "worst" and options.w1 > 0
    pooled_first = options.contention_scope == "multi_node"
    start = first_incumbent(inst, options, ctx, estimated=lazy and pooled_first)
    best = _Incumbent(start.greedy, start.started, start.value)
    if ctx.budget.spent():
        return _timed_out(best, ctx.budget.termination)
    modeled = _priced_by(inst, best.started) if lazy else None
    if modeled is not None and pooled_first and worth_starting(ctx.budget):
        pooled = pooled_rounds(inst, options, ctx, modeled, best.started, best.value)
        if pooled.status is Status.OPTIMAL:
            return pooled
        # The pooled rounds start from the best placement and only keep better ones.
        best.started = pooled.started
        best.value = pooled.value if pooled.value is not None else best.value
        best.rounds, best.bound = pooled.lazy_rounds, pooled.bound
        if best.bound is not None and _too_late(ctx.budget):
            # Too little time left for the per-candidate model to finish its root: the best
            # placement, with the gap the pooled bound proves.
            proven = relative_gap(best.bound, best.value)
            return PlacementAnswer(
                best.found,
                best.started,
                gap=proven,
                lazy_rounds=best.rounds,
                bound=best.bound,
                termination=ctx.budget.termination,
            )
    return _per_candidate(inst, options, ctx, modeled, best)


def _priced_by(inst: Instance, started: Started) -> BoolArray:
    """The pairs `started` already co-locates, so that the model prices the starting incumbent
    at its true value."""
    modeled = np.zeros((len(inst.configs),) * 2, bool)
    modeled |= unmodeled_pairs(inst, started, modeled)
    modeled |= modeled.T
    return modeled


def _too_late(budget: TimeBudget) -> bool:
    """Whether less than `SHARE_LEFT` of the time limit is left."""
    return budget.seconds is not None and budget.elapsed() > (1.0 - SHARE_LEFT) * budget.seconds


def _per_candidate(
    inst: Instance,
    options: ContentionPlacementOptions,
    ctx: SolveContext,
    modeled: BoolArray | None,
    best: _Incumbent,
) -> PlacementAnswer:
    """The per-candidate model from the best placement, adding the candidate pairs its
    placements co-locate unpriced until none is left (or the solve stops short of optimal)."""
    rounds = best.rounds
    while True:
        if ctx.budget.spent():
            best.rounds = rounds
            return _timed_out(best, ctx.budget.termination)
        rounds += 1
        model, pl = build(inst, options, modeled)
        if too_big_for(ctx.budget, model.num_rows):
            best.rounds = rounds - 1
            return _timed_out(best, ctx.budget.termination)
        start = start_vector(inst, pl, canonical(inst, best.started))
        solution = ctx.solve(SolveRequest(model, start=start, tuning={"highs": HIGHS_OPTIONS}))
        if not solution.status.has_solution:
            return _without_incumbent(solution, best, rounds)
        started = decode(inst, pl, solution.x)
        problems = check_feasible(inst, started)
        if problems:
            return PlacementAnswer(Status.ERROR, problems=problems, lazy_rounds=rounds)
        value = evaluate(inst, started, options.w1, options.penalty).objective
        if value >= best.value:
            best.started, best.value = started, value
        if modeled is None:
            return _final(solution, True, best, rounds)
        missing = unmodeled_pairs(inst, started, modeled)
        complete = not missing.any()
        if complete or solution.status is not Status.OPTIMAL:
            return _final(solution, complete, best, rounds)
        modeled |= missing | missing.T


def _timed_out(best: _Incumbent, termination: Termination) -> PlacementAnswer:
    """The best placement known when the time limit is spent between two stages."""
    known = None if best.bound is None else relative_gap(best.bound, best.value)
    return PlacementAnswer(
        best.found,
        best.started,
        gap=known,
        lazy_rounds=best.rounds,
        bound=best.bound,
        termination=termination,
    )


def _without_incumbent(failed: Solution, best: _Incumbent, rounds: int) -> PlacementAnswer:
    """A limit reached before any incumbent: answer with the best placement known (the greedy
    one unless the rounds found better); anything else is the solve's own failure."""
    if failed.status is Status.NO_SOLUTION and failed.termination.is_limit:
        known = None if best.bound is None else relative_gap(best.bound, best.value)
        return PlacementAnswer(
            best.found, best.started, gap=known, lazy_rounds=rounds, solution=failed
        )
    return PlacementAnswer(failed.status, lazy_rounds=rounds, solution=failed)


def _final(solution: Solution, complete: bool, best: _Incumbent, rounds: int) -> PlacementAnswer:
    """The best placement with the last solve's status (`feasible` while pairs are missing) and
    the gap to the better of the last solve's and the pooled rounds' bounds."""
    bound = solution.extra.get("mip_dual_bound")
    if best.bound is not None:
        bound = best.bound if bound is None else min(bound, best.bound)
    status: Status = solution.status if complete else Status.FEASIBLE
    gap = solution.mip_gap
    if status is not Status.OPTIMAL and bound is not None:
        gap = relative_gap(bound, best.value)
    return PlacementAnswer(
        status, best.started, solution.objective, gap, lazy_rounds=rounds, solution=solution
    )
