"""Build, solve and read back the placement MILP; worst-co-runner rows between candidates are
added lazily.

Lazy rows: the model first prices only contention involving running jobs. Leaving rows out only
lowers the c's, so each model is a relaxation and its bound is valid for the full problem. If the
placement it returns co-locates candidates whose pair was left out and that pair hurts more than
the running jobs already do, the pairs are added (for every node) and the model is solved again
from that placement. When no such pair remains, the placement is optimal for the full model. In
practice the optimum rarely co-locates sensitive candidates, so one or two solves suffice, and
each is much smaller than the full model.

Pooled first: when single-node jobs are free of contention (DeepShare's scope) and the penalty is
the worst co-runner, the start is the better of the greedy placement and a linear estimate's
(`placement_estimate`, a small packing MILP), and the pooled relaxation (`placement_pooled`, no
per-candidate copies) is solved first, with the same lazy pairs, each round warm-started from the
best placement so far. Its dual bound is valid for the full problem, so once the best placement
evaluated so far is within the gap tolerance of it, that placement is optimal and the
per-candidate model is never built. Otherwise the per-candidate model takes over from the best
placement and the pairs found, and the final gap uses the better of both bounds.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from formulations.placement.additive import add_additive
from formulations.placement.estimate import build as estimate_model
from formulations.placement.evaluate import evaluate
from formulations.placement.greedy import greedy, improve
from formulations.placement.instance import Instance
from formulations.placement.model import Placement, add_placement, canonical
from formulations.placement.pooled import Pooled
from formulations.placement.pooled import build as pooled_model
from formulations.placement.pooled import decode as pooled_decode
from formulations.placement.pooled import encode as pooled_encode
from formulations.placement.worst import Penalty, add_worst, unmodeled_pairs
from solver.context import SolveContext
from solver.model import Model, Sense
from solver.status import Status

if TYPE_CHECKING:
    from formulations.placement.policy import ContentionPlacementOptions

Started = dict[int, tuple[int, list[int]]]

# RINS and RENS (sub-MIPs around the LP point) spent most of the search time on these models
# without improving the greedy start much more than the other heuristics do; the time goes to
# the tree instead, where the bound, the real difficulty, is closed. Search settings only: they
# do not change what counts as optimal.
HIGHS_OPTIONS: dict[str, bool | int | float | str] = {
    "mip_heuristic_run_rins": False,
    "mip_heuristic_run_rens": False,
}


# HiGHS's defaults for "optimal": relative gap 1e-4 unless the user sets one, absolute 1e-6.
DEFAULT_GAP = 1e-4
ABSOLUTE_GAP = 1e-6
POOLED_SHARE = 0.95
SHARE_LEFT = 0.1  # the per-candidate model starts only with this share of a limit left
# The estimate's start gets at most this much time, and at most this share of a time limit.
ESTIMATE_SECONDS = 1.0
ESTIMATE_SHARE = 0.25


@dataclass
class Answer:
    status: Status
    started: Started = field(default_factory=dict)
    solver_objective: float | None = None
    gap: float | None = None
    problems: list[str] = field(default_factory=list)
    lazy_rounds: int = 0
    bound: float | None = None  # a valid upper bound on the objective, when one is known
    value: float | None = None  # the evaluated objective of `started`, when it was computed


def build(
    inst: Instance,
    options: ContentionPlacementOptions,
    modeled: NDArray[np.bool_] | None = None,
) -> tuple[Model, Placement]:
    """maximize W2·U − W1·Φ over the placement rows and the chosen penalty's rows."""
    model = Model("contention_placement")
    placement = add_placement(model, inst)
    w1 = options.w1
    w2 = 1.0 - w1
    m, total = inst.num_jobs, inst.total_gpus
    g_running = sum(int(g.sum()) for g in inst.running_gpus)
    demand = inst.demand[inst.options.candidate].astype(float)
    penalty = Penalty({}, float(m))  # every job at CS 1 when contention has no weight
    if w1 > 0:
        if options.penalty == "worst":
            penalty = add_worst(model, inst, placement, modeled)
        else:
            penalty = add_additive(model, inst, placement)
    terms = {placement.v: w2 * demand / total}
    for block, coefficients in penalty.terms.items():
        if block.size:
            terms[block] = -w1 * coefficients / m
    offset = w2 * g_running / total - w1 * penalty.constant / m
    model.set_objective(terms, Sense.MAXIMIZE, offset=offset)
    return model, placement


def decode(inst: Instance, pl: Placement, x: np.ndarray) -> Started:
    """Started candidates: job index → (option, node indices), read from the solution. Pooled
    single-node counts go to the group's members that did not start otherwise, in order."""
    v = np.rint(x[pl.v.span]).astype(np.int64)
    w = np.rint(x[pl.w.span]).astype(np.int64)
    opts = inst.options
    started: Started = {}
    for o in np.flatnonzero((v > 0) & ~opts.pooled).tolist():
        nodes = pl.pair_node[(pl.pair_option == o) & (w > 0)].tolist()
        started[int(inst.candidates[opts.candidate[o]])] = (o, nodes)
    for o in np.flatnonzero((v > 0) & opts.pooled).tolist():
        members = np.flatnonzero(inst.group == inst.group[opts.candidate[o]])
        idle = iter(j for j in inst.candidates[members].tolist() if j not in started)
        for pair in np.flatnonzero((pl.pair_option == o) & (w > 0)).tolist():
            for _ in range(int(w[pair])):
                started[next(idle)] = (o, [int(pl.pair_node[pair])])
    return started


def start_vector(inst: Instance, pl: Placement, started: Started) -> tuple[np.ndarray, np.ndarray]:
    """The placement decisions (start, use) of `started` as a sparse MILP starting point."""
    v = np.zeros(pl.v.size)
    w = np.zeros(pl.w.size)
    pair_at = {
        (o, n): i
        for i, (o, n) in enumerate(zip(pl.pair_option.tolist(), pl.pair_node.tolist(), strict=True))
    }
    for o, nodes in started.values():
        v[o] += 1.0
        for n in nodes:
            w[pair_at[(o, n)]] += 1.0
    index = np.concatenate(
        [
            np.arange(pl.v.start, pl.v.start + pl.v.size),
            np.arange(pl.w.start, pl.w.start + pl.w.size),
        ]
    )
    return index.astype(np.int64), np.concatenate([v, w])


@dataclass
class _Best:
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

    def answer(self, status: Status, rounds: int) -> Answer:
        gap = None
        if status is Status.OPTIMAL and self.bound is not None:
            gap = relative_gap(self.bound, self.value)
        return Answer(
            status, self.started, gap=gap, lazy_rounds=rounds, bound=self.bound, value=self.value
        )


def _pooled_first(
    inst: Instance,
    options: ContentionPlacementOptions,
    ctx: SolveContext,
    modeled: NDArray[np.bool_],
    best: Started,
    best_value: float,
    deadline: float | None,
) -> Answer:
    """Solve the pooled relaxation, adding candidate pairs lazily, until the best
    placement evaluated so far is within the gap tolerance of its bound (status `optimal`) or
    nothing is left to add (status `feasible`: the caller goes on). The answer carries the best
    placement and the best bound; `modeled` grows in place.

    Every incumbent the solver finds is decoded and scored as it comes: it may be the better
    placement, and the pairs it co-locates unpriced are added with the final solution's, which
    saves rounds. The solve stops as soon as the best placement is proven, by a new incumbent
    or by the solver's dual bound falling to it."""
    tolerance = ctx.options.mip_gap if ctx.options.mip_gap is not None else DEFAULT_GAP
    found = _Best(inst, options, tolerance, best, best_value)
    # Where a round stops decides which pairs the next one prices. A looser tolerance would stop
    # it at an incumbent the relaxation overvalues and take more rounds to discover the same
    # pairs (a 1e-3 gap took 30 s where 1e-4 took 10), so the rounds keep the default; the
    # user's tolerance is tested against the true values via `found`.
    search = {**HIGHS_OPTIONS, "mip_rel_gap": min(tolerance, DEFAULT_GAP)}
    rounds = 0
    lifted = False
    while True:
        rounds += 1
        left = None if deadline is None else max(deadline - time.perf_counter(), 1e-3)
        relaxation = pooled_model(inst, options.w1, modeled, lifted)
        watch = _Watch(inst, relaxation, modeled, found)
        solution = ctx.solve(
            relaxation.model,
            start=pooled_encode(inst, relaxation, found.started),
            time_limit=left,
            tuning={"highs": search},
            on_incumbent=watch,
            on_bound=found.proven,
        )
        if found.proven(solution.extra.get("mip_dual_bound")):
            return found.answer(Status.OPTIMAL, rounds)
        if not solution.status.has_solution:
            return found.answer(Status.FEASIBLE, rounds)
        started = watch.decode(solution.x)
        if check_feasible(inst, started):
            return found.answer(Status.FEASIBLE, rounds)
        found.offer(started)
        # The relaxation may have placed candidates next to each other at too low a price:
        # single-job moves from its placement often recover most of the difference.
        found.offer(improve(inst, started, options.w1, options.penalty))
        if found.proven():
            return found.answer(Status.OPTIMAL, rounds)
        if solution.status is not Status.OPTIMAL:
            return found.answer(Status.FEASIBLE, rounds)
        missing = unmodeled_pairs(inst, started, modeled) | watch.seen_pairs
        if not missing.any():
            if lifted:
                return found.answer(Status.FEASIBLE, rounds)  # nothing left to add
            # Every pair the placement uses is priced, yet it scores below the relaxation: the
            # relaxation may count as below a level pieces a candidate lifts to it. Those rows
            # cost time on most snapshots, so they come only now.
            lifted = True
        modeled |= missing | missing.T


@dataclass
class _Watch:
    """The incumbent callback of one pooled round: score the placement, note the pairs it
    co-locates unpriced (`seen_pairs`), stop once the best is proven."""

    inst: Instance
    relaxation: Pooled
    modeled: NDArray[np.bool_]
    found: _Best
    seen_pairs: NDArray[np.bool_] = field(init=False)
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
            self.last = x.copy(), pooled_decode(self.inst, self.relaxation, x)
        return self.last[1]


def _estimate(
    inst: Instance, options: ContentionPlacementOptions, ctx: SolveContext, seconds: float
) -> tuple[Started, float] | None:
    """The estimate's placement (`placement_estimate`) after single-job moves, and its value."""
    estimate = estimate_model(inst, options.w1)
    solution = ctx.solve(estimate.model, time_limit=seconds, tuning={"highs": HIGHS_OPTIONS})
    if not solution.status.has_solution:
        return None
    started = pooled_decode(inst, estimate, solution.x)
    if check_feasible(inst, started):
        return None
    started = improve(inst, started, options.w1, options.penalty)
    return started, evaluate(inst, started, options.w1, options.penalty).objective


def relative_gap(bound: float, value: float) -> float:
    return max(bound - value, 0.0) / max(abs(value), 1e-9)


def check_feasible(inst: Instance, started: dict[int, tuple[int, list[int]]]) -> list[str]:
    """Independent of the model: shapes respected and no node over its free GPUs."""
    problems = []
    load = np.zeros(len(inst.node_ids), dtype=np.int64)
    opts = inst.options
    for j, (o, nodes) in started.items():
        if len(set(nodes)) != opts.nodes[o]:
            problems.append(f"{inst.job_ids[j]} uses {len(nodes)} nodes, its shape {opts.nodes[o]}")
        load[nodes] += opts.per_node[o]
    for n in np.flatnonzero(load > inst.free).tolist():
        problems.append(f"node {inst.node_ids[n]} over its free GPUs")
    return problems


def solve(inst: Instance, options: ContentionPlacementOptions, ctx: SolveContext) -> Answer:
    """The best placement within the options' limits, starting from the greedy one (or, under
    DeepShare's scope, the estimate's when it scores better)."""
    started_at = time.perf_counter()
    limit = ctx.options.time_limit
    best = greedy_answer = greedy(inst, options.w1, options.penalty)
    best_value = evaluate(inst, best, options.w1, options.penalty).objective
    lazy = options.penalty == "worst" and options.w1 > 0
    # An export writes the per-candidate ILP (the policy's model), not the relaxation.
    pooled_first = options.contention_scope == "multi_node" and ctx.export_path is None
    if lazy and pooled_first:
        # The estimate packs far better than the greedy start (on the trace snapshots with a
        # quarter of the GPUs free: 0–1.3 % from the optimum against 0.6–4 %) in 0.1–0.5 s: under
        # a time limit it is often the answer, and the rounds start closer to the optimum.
        seconds = (
            ESTIMATE_SECONDS if limit is None else min(ESTIMATE_SECONDS, ESTIMATE_SHARE * limit)
        )
        estimated = _estimate(inst, options, ctx, seconds)
        if estimated is not None and estimated[1] > best_value:
            best, best_value = estimated
    modeled = None
    if lazy:
        # Start from the pairs the greedy placement already co-locates, so that the model
        # prices the starting incumbent at its true value.
        modeled = np.zeros((len(inst.configs),) * 2, bool)
        modeled |= unmodeled_pairs(inst, best, modeled)
        modeled |= modeled.T
    rounds = 0
    bound_known: float | None = None
    deadline: float | None = None
    if limit is not None:
        # Under a time limit the pooled rounds get all of it but the margin to decode and
        # answer: the per-candidate model, a larger model started from scratch, rarely improved
        # the placement in the fifth of the limit it used to get (at 2 s on the 25 %-free
        # snapshots, the rounds with that time proved three more of ten and found better
        # placements on three). It runs when the rounds end early without a proof, or when the
        # start (greedy and estimate) took most of the limit.
        deadline = started_at + POOLED_SHARE * limit
        pooled_first &= deadline - time.perf_counter() > 0.25 * POOLED_SHARE * limit
    if modeled is not None and pooled_first:
        pooled = _pooled_first(inst, options, ctx, modeled, best, best_value, deadline)
        rounds, bound_known = pooled.lazy_rounds, pooled.bound
        if pooled.status is Status.OPTIMAL:
            return pooled
        # The pooled rounds start from `best` and only keep better placements.
        best = pooled.started
        best_value = pooled.value if pooled.value is not None else best_value
        spent = time.perf_counter() - started_at
        if limit is not None and bound_known is not None and limit - spent < SHARE_LEFT * limit:
            # Too little time left for the per-candidate model to finish its root: the best
            # placement, with the gap the pooled bound proves.
            found = Status.FALLBACK if best is greedy_answer else Status.FEASIBLE
            proven = relative_gap(bound_known, best_value)
            return Answer(found, best, gap=proven, lazy_rounds=rounds, bound=bound_known)
    while True:
        rounds += 1
        model, pl = build(inst, options, modeled)
        left = None if limit is None else max(limit - (time.perf_counter() - started_at), 1e-3)
        start = start_vector(inst, pl, canonical(inst, best))
        solution = ctx.solve(model, start=start, time_limit=left, tuning={"highs": HIGHS_OPTIONS})
        if not solution.status.has_solution:
            # Only a limit reached before any incumbent gets here: answer with the greedy one.
            failed: Status = solution.status
            if failed is Status.TIME_LIMIT:
                known = None if bound_known is None else relative_gap(bound_known, best_value)
                found = Status.FALLBACK if best is greedy_answer else Status.FEASIBLE
                return Answer(found, best, gap=known, lazy_rounds=rounds)
            return Answer(failed, lazy_rounds=rounds)
        started = decode(inst, pl, solution.x)
        problems = check_feasible(inst, started)
        if problems:
            return Answer(Status.ERROR, problems=problems, lazy_rounds=rounds)
        value = evaluate(inst, started, options.w1, options.penalty).objective
        if value >= best_value:
            best, best_value = started, value
        if modeled is None:
            complete = True
            break
        missing = unmodeled_pairs(inst, started, modeled)
        complete = not missing.any()
        if complete or solution.status is not Status.OPTIMAL:
            break
        modeled |= missing | missing.T
    bound = solution.extra.get("mip_dual_bound")
    if bound_known is not None:
        bound = bound_known if bound is None else min(bound, bound_known)
    status: Status = solution.status if complete else Status.FEASIBLE
    gap = solution.mip_gap
    if status is not Status.OPTIMAL and bound is not None:
        gap = relative_gap(bound, best_value)
    return Answer(status, best, solution.objective, gap, lazy_rounds=rounds)
