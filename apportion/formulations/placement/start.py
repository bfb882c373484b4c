"""The search's first incumbent: the greedy placement, or under DeepShare's scope the linear
estimate's (`estimate`, a small packing MILP, after single-job moves) when it scores better."""

from __future__ import annotations

from dataclasses import dataclass

from apportion.formulations.placement.answer import check_feasible
from apportion.formulations.placement.estimate import build as estimate_model
from apportion.formulations.placement.evaluate import evaluate
from apportion.formulations.placement.greedy import greedy, improve
from apportion.formulations.placement.instance import Instance, Started
from apportion.formulations.placement.options import ContentionPlacementOptions
from apportion.formulations.placement.pooled.decode import decode as pooled_decode
from apportion.formulations.placement.tuning import HIGHS_OPTIONS
from apportion.solver.context import SolveContext, SolveRequest

# The estimate's start gets at most this much time, and at most this share of a time limit.
ESTIMATE_SECONDS = 1.0
ESTIMATE_SHARE = 0.25


@dataclass
class Start:
    """The first incumbent and its evaluated objective; `greedy` is kept to tell a fallback
    answer (the greedy placement itself) from a placement the solvers found."""

    greedy: Started
    started: Started
    value: float


def first_incumbent(
    inst: Instance, options: ContentionPlacementOptions, ctx: SolveContext, estimated: bool
) -> Start:
    """The greedy placement, or with `estimated` the estimate's when it scores better."""
    placed = greedy(inst, options.w1, options.penalty, budget=ctx.budget)
    start = Start(placed, placed, evaluate(inst, placed, options.w1, options.penalty).objective)
    if estimated and not ctx.budget.spent():
        # The estimate packs far better than the greedy start, in a fraction of a second (the
        # `placement` bench rows): under a time limit it is often the answer, and the rounds
        # start closer to the optimum.
        limit = ctx.budget.seconds
        seconds = (
            ESTIMATE_SECONDS if limit is None else min(ESTIMATE_SECONDS, ESTIMATE_SHARE * limit)
        )
        found = _estimate(inst, options, ctx, seconds)
        if found is not None and found[1] > start.value:
            start.started, start.value = found
    return start


def _estimate(
    inst: Instance, options: ContentionPlacementOptions, ctx: SolveContext, seconds: float
) -> tuple[Started, float] | None:
    """The estimate's placement after single-job moves, and its value."""
    estimate = estimate_model(inst, options.w1)
    solution = ctx.solve(
        SolveRequest(
            estimate.model, time_limit=seconds, tuning={"highs": HIGHS_OPTIONS}, auxiliary=True
        )
    )
    if not solution.status.has_solution:
        return None
    started = pooled_decode(inst, estimate, solution.x, ctx)
    if check_feasible(inst, started):
        return None
    started = improve(inst, started, options.w1, options.penalty, budget=ctx.budget)
    return started, evaluate(inst, started, options.w1, options.penalty).objective
