"""The pooled rounds: the pooled relaxation solved with candidate pairs added lazily, each round
warm-started from the best placement so far. Its dual bound is valid for the full problem, so
once the best placement evaluated so far is within the gap tolerance of it, that placement is
optimal and the per-candidate model is never built."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from apportion.formulations.placement.answer import PlacementAnswer, check_feasible
from apportion.formulations.placement.evaluate import evaluate
from apportion.formulations.placement.greedy import improve
from apportion.formulations.placement.instance import Instance, Started
from apportion.formulations.placement.options import ContentionPlacementOptions
from apportion.formulations.placement.pooled.decode import decode as pooled_decode
from apportion.formulations.placement.pooled.encode import encode as pooled_encode
from apportion.formulations.placement.pooled.model import Pooled
from apportion.formulations.placement.pooled.model import build as pooled_model
from apportion.formulations.placement.tuning import HIGHS_OPTIONS
from apportion.formulations.placement.worst import unmodeled_pairs
from apportion.solver.arraytypes import BoolArray
from apportion.solver.backends import Scalar
from apportion.solver.context import SolveContext, SolveRequest, TimeBudget
from apportion.solver.status import Status, relative_gap

# HiGHS's defaults for "optimal": relative gap 1e-4 unless the user sets one, absolute 1e-6.
DEFAULT_GAP = 1e-4
ABSOLUTE_GAP = 1e-6
# Under a time limit the pooled rounds get all of it but the margin to decode and answer: the
# per-candidate model, a larger model started from scratch, rarely improved the placement in the
# share of the limit it used to get, where the rounds with that time proved and improved more
# placements (the `placement` bench's time-limited rows). It runs when the rounds
# end early without a proof, or when the start (greedy and estimate) took most of the limit:
# more than three quarters of the rounds' share.
POOLED_SHARE = 0.95
LATE_START = 0.75


def worth_starting(budget: TimeBudget) -> bool:
    """Whether enough of the rounds' share of the time limit is left to start them."""
    return budget.seconds is None or budget.elapsed() < LATE_START * POOLED_SHARE * budget.seconds


@dataclass
class Best:
    """The best placement evaluated so far and the best bound seen: together they decide when
    the pooled rounds have proven a placement."""

    inst: Instance
    options: ContentionPlacementOptions
    tolerance: float
    started: Started
    value: float
    bound: float | None = None
    last_offered: Started | None = field(default=None, repr=False)

    def offer(self, started: Started) -> None:
        # A round's final solution is usually its last incumbent, offered already (the decoder
        # hands back the same placement object): no need to score it twice.
        if started is self.last_offered:
            return
        self.last_offered = started
        value = evaluate(self.inst, started, self.options.w1, self.options.penalty).objective
        if value > self.value:
            self.started, self.value = started, value

    def proven(self, bound: float | None = None) -> bool:
        """Whether the best placement is within the gap tolerance of the best bound, after
        taking `bound` (a valid bound for the full problem) into account."""
        if bound is not None and np.isfinite(bound):
            self.bound = bound if self.bound is None else min(self.bound, bound)
        return self.bound is not None and self.bound - self.value <= max(
            self.tolerance * abs(self.value), ABSOLUTE_GAP
        )

    def answer(self, status: Status, rounds: int) -> PlacementAnswer:
        gap = None
        if status is Status.OPTIMAL and self.bound is not None:
            gap = relative_gap(self.bound, self.value)
        return PlacementAnswer(
            status, self.started, gap=gap, lazy_rounds=rounds, bound=self.bound, value=self.value
        )


def pooled_rounds(
    inst: Instance,
    options: ContentionPlacementOptions,
    ctx: SolveContext,
    modeled: BoolArray,
    best: Started,
    best_value: float,
) -> PlacementAnswer:
    """Solve the pooled relaxation, adding candidate pairs lazily, until the best
    placement evaluated so far is within the gap tolerance of its bound (status `optimal`) or
    nothing is left to add (status `feasible`: the caller goes on). The answer carries the best
    placement and the best bound; `modeled` grows in place.

    Every incumbent the solver finds is decoded and scored as it comes: it may be the better
    placement, and the pairs it co-locates unpriced are added with the final solution's, which
    saves rounds. The solve stops as soon as the best placement is proven, by a new incumbent
    or by the solver's dual bound falling to it."""
    tolerance = ctx.options.mip_gap if ctx.options.mip_gap is not None else DEFAULT_GAP
    found = Best(inst, options, tolerance, best, best_value)
    # Where a round stops decides which pairs the next one prices. A looser tolerance would stop
    # it at an incumbent the relaxation overvalues and take more rounds (and more time) to
    # discover the same pairs, so the rounds keep the default; the
    # user's tolerance is tested against the true values via `found`.
    search: dict[str, Scalar] = {**HIGHS_OPTIONS, "mip_rel_gap": min(tolerance, DEFAULT_GAP)}
    rounds = 0
    lifted = False
    while True:
        rounds += 1
        ended = _round(inst, options, ctx, modeled, found, lifted, search)
        if isinstance(ended, Status):
            return found.answer(ended, rounds)
        if not ended.any():
            if lifted:
                return found.answer(Status.FEASIBLE, rounds)  # nothing left to add
            # Every pair the placement uses is priced, yet it scores below the relaxation: the
            # relaxation may count as below a level pieces a candidate lifts to it. Those rows
            # cost time on most snapshots, so they come only now.
            lifted = True
        modeled |= ended | ended.T


def _round(
    inst: Instance,
    options: ContentionPlacementOptions,
    ctx: SolveContext,
    modeled: BoolArray,
    found: Best,
    lifted: bool,
    search: dict[str, Scalar],
) -> Status | BoolArray:
    """One pooled round: the status the rounds end with, or the configuration pairs the
    placements it found co-locate without a price (to add for the next round)."""
    relaxation = pooled_model(inst, options.w1, modeled, lifted)
    watch = Watch(inst, relaxation, modeled, found, ctx)
    solution = ctx.solve(
        SolveRequest(
            relaxation.model,
            start=pooled_encode(inst, relaxation, found.started),
            time_limit=ctx.budget.fraction_of_total(POOLED_SHARE),
            tuning={"highs": search},
            on_incumbent=watch,
            on_bound=found.proven,
            auxiliary=True,
        )
    )
    if found.proven(solution.extra.get("mip_dual_bound")):
        return Status.OPTIMAL
    if not solution.status.has_solution:
        return Status.FEASIBLE
    started = watch.decode(solution.x)
    if check_feasible(inst, started):
        return Status.FEASIBLE
    found.offer(started)
    # The relaxation may have placed candidates next to each other at too low a price:
    # single-job moves from its placement often recover most of the difference.
    found.offer(improve(inst, started, options.w1, options.penalty, budget=ctx.budget))
    if found.proven():
        return Status.OPTIMAL
    if solution.status is not Status.OPTIMAL:
        return Status.FEASIBLE
    missing: BoolArray = unmodeled_pairs(inst, started, modeled) | watch.seen_pairs
    return missing


@dataclass
class Watch:
    """The incumbent callback of one pooled round: score the placement, note the pairs it
    co-locates unpriced (`seen_pairs`), stop once the best is proven."""

    inst: Instance
    relaxation: Pooled
    modeled: BoolArray
    found: Best
    ctx: SolveContext
    seen_pairs: BoolArray = field(init=False)
    last: tuple[NDArray[np.float64], Started] | None = None

    def __post_init__(self) -> None:
        self.seen_pairs = np.zeros_like(self.modeled)

    def __call__(self, x: NDArray[np.float64], bound: float) -> bool:
        started = self.decode(x)
        if check_feasible(self.inst, started):
            return False
        self.found.offer(started)
        new = unmodeled_pairs(self.inst, started, self.modeled)
        np.logical_or(self.seen_pairs, new, out=self.seen_pairs)
        return self.found.proven(bound)

    def decode(self, x: NDArray[np.float64]) -> Started:
        """The placement of `x`; the round's final solution is usually its last incumbent,
        already decoded (grouping can take tens of ms, which a time limit feels)."""
        if self.last is None or not np.array_equal(self.last[0], x):
            self.last = x.copy(), pooled_decode(self.inst, self.relaxation, x, self.ctx)
        return self.last[1]
