"""Build, solve and read back the placement MILP; worst-co-runner rows between candidates are
added lazily.

Lazy rows: the model first prices only contention involving running jobs. Leaving rows out only
lowers the c's, so each model is a relaxation and its bound is valid for the full problem. If the
placement it returns co-locates candidates whose pair was left out and that pair hurts more than
the running jobs already do, the pairs are added (for every node) and the model is solved again
from that placement. When no such pair remains, the placement is optimal for the full model. In
practice the optimum rarely co-locates sensitive candidates, so one or two solves suffice, and
each is much smaller than the full model.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from formulations.placement_additive import add_additive
from formulations.placement_eval import evaluate
from formulations.placement_greedy import greedy
from formulations.placement_instance import Instance
from formulations.placement_model import Placement, add_placement, canonical
from formulations.placement_worst import Penalty, add_worst, unmodeled_pairs
from solver.model import Model, Sense
from solver.policy import SolveContext
from solver.status import Status

if TYPE_CHECKING:
    from formulations.contention_placement import ContentionPlacementOptions

Started = dict[int, tuple[int, list[int]]]

# RINS and RENS (sub-MIPs around the LP point) spent most of the search time on these models
# without improving the greedy start much more than the other heuristics do; the time goes to
# the tree instead, where the bound, the real difficulty, is closed. Search settings only: they
# do not change what counts as optimal.
HIGHS_OPTIONS: dict[str, bool | int | float | str] = {
    "mip_heuristic_run_rins": False,
    "mip_heuristic_run_rens": False,
}


@dataclass
class Answer:
    status: Status
    started: Started = field(default_factory=dict)
    solver_objective: float | None = None
    gap: float | None = None
    problems: list[str] = field(default_factory=list)
    lazy_rounds: int = 0


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
    """The best placement within the options' limits, starting from the greedy one."""
    started_at = time.perf_counter()
    limit = ctx.options.time_limit
    best = greedy(inst, options.w1, options.penalty)
    best_value = evaluate(inst, best, options.w1, options.penalty).objective
    lazy = options.penalty == "worst" and options.w1 > 0
    modeled = None
    if lazy:
        # Start from the pairs the greedy placement already co-locates, so that the model
        # prices the starting incumbent at its true value.
        modeled = np.zeros((len(inst.configs),) * 2, bool)
        modeled |= unmodeled_pairs(inst, best, modeled)
        modeled |= modeled.T
    rounds = 0
    while True:
        rounds += 1
        model, pl = build(inst, options, modeled)
        left = None if limit is None else max(limit - (time.perf_counter() - started_at), 1e-3)
        start = start_vector(inst, pl, canonical(inst, best))
        solution = ctx.solve(model, start=start, time_limit=left, highs_options=HIGHS_OPTIONS)
        if not solution.status.has_solution:
            # Only a limit reached before any incumbent gets here: answer with the greedy one.
            failed: Status = solution.status
            if failed is Status.TIME_LIMIT:
                return Answer(Status.FALLBACK, best, lazy_rounds=rounds)
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
    status: Status = solution.status if complete else Status.FEASIBLE
    gap = solution.mip_gap
    if status is not Status.OPTIMAL and bound is not None:
        gap = max(bound - best_value, 0.0) / max(abs(best_value), 1e-9)
    return Answer(status, best, solution.objective, gap, lazy_rounds=rounds)
