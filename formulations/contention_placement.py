"""Contention-penalized placement ILP (FORMULATIONS §7): the exact counterpart of DeepShare's
learned policy. Decide which waiting jobs start now, in which shape, on which nodes.

Data: nodes n with G_n GPUs, F_n of them free (running jobs never move); running jobs with their
placements; candidates a with demand g_a and allowed shapes (k nodes × p GPUs); CS(α | β) for job
configurations α = (class, total GPUs, nodes spanned). With C = Σ_n G_n GPUs and M jobs in the
snapshot (running and waiting):

    maximize   W2 · U − W1 · Φ
    U = (Σ_running g_r + Σ_o g_o v_o) / C                       (GPU utilization)
    Φ = (Σ_running+candidates c_j) / M                          (mean contention sensitivity;
                                                                 a waiting job counts c = 1)
subject to the placement rows of `placement_model` (shapes, capacity, one start per job) and
either penalty:

- worst (default, DeepShare's simulator): c_j = max(1, max over co-runners CS(α_j | α_b)),
  linearized per (configuration, node) in `placement_worst`;
- additive: c_j = 1 + Σ over co-runners (CS(α_j | α_b) − 1), linearized per job pair in
  `placement_additive` (heavier: quadratic in candidates).

Co-runners are the other jobs holding GPUs on a node the job uses. The mean runs over every job
of the snapshot rather than over running ones only: a mean over the started jobs would reward
starting an uncontended job just to dilute it, and is not linear. DeepShare's own metric (mean
over running and started jobs) is reported as `mean_contention_sensitivity`.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field, field_validator

from formulations.placement_additive import add_additive
from formulations.placement_eval import Evaluation, evaluate
from formulations.placement_greedy import greedy
from formulations.placement_instance import Instance, build_instance
from formulations.placement_model import Placement, add_placement
from formulations.placement_report import outcome_from
from formulations.placement_worst import Penalty, add_worst
from solver.errors import InputError
from solver.model import Model, Sense
from solver.options import PolicyOptions
from solver.policy import Outcome, Policy, SolveContext
from solver.problem import ClusterArrays
from solver.snapshot import Snapshot
from solver.status import Status


class ContentionPlacementOptions(PolicyOptions):
    w1: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        description="Weight W1 of the mean contention sensitivity; utilization gets W2 = 1 − W1.",
    )
    penalty: Literal["worst", "additive"] = Field(
        "worst",
        description="worst: a job's CS is set by its worst co-runner (DeepShare); additive: "
        "1 + Σ (CS − 1) over its co-runners.",
    )
    contention_scope: Literal["multi_node", "all"] = Field(
        "multi_node",
        description="multi_node: jobs on a single node neither suffer nor cause network "
        "contention (DeepShare's simulator); all: every co-located pair counts.",
    )
    shapes: dict[int, list[tuple[int, int]]] | None = Field(
        None,
        description="Allowed shapes per demand, {demand: [[nodes, GPUs per node], ...]}; "
        "demands not listed get powers of two up to the node size.",
    )
    allow_single_node: bool = Field(
        True, description="Allow multi-GPU jobs on one node (DeepShare's baselines do not)."
    )

    @field_validator("shapes")
    @classmethod
    def _shapes_match(
        cls, shapes: dict[int, list[tuple[int, int]]] | None
    ) -> dict[int, list[tuple[int, int]]] | None:
        for demand, listed in (shapes or {}).items():
            for k, p in listed:
                if k < 1 or p < 1 or k * p != demand:
                    raise ValueError(
                        f"shape [{k}, {p}] for demand {demand}: nodes × GPUs per node must "
                        f"equal the demand"
                    )
        return shapes


def build(inst: Instance, options: ContentionPlacementOptions) -> tuple[Model, Placement]:
    model = Model("contention_placement")
    placement = add_placement(model, inst)
    w1 = options.w1
    w2 = 1.0 - w1
    m, total = inst.num_jobs, inst.total_gpus
    g_running = sum(int(g.sum()) for g in inst.running_gpus)
    demand = inst.demand[inst.options.candidate].astype(float)
    penalty = Penalty({}, float(m))  # every job at CS 1 when contention has no weight
    if w1 > 0:
        add = add_worst if options.penalty == "worst" else add_additive
        penalty = add(model, inst, placement)
    terms = {placement.v: w2 * demand / total}
    for block, coefficients in penalty.terms.items():
        if block.size:
            terms[block] = -w1 * coefficients / m
    offset = w2 * g_running / total - w1 * penalty.constant / m
    model.set_objective(terms, Sense.MAXIMIZE, offset=offset)
    return model, placement


def decode(inst: Instance, pl: Placement, x: np.ndarray) -> dict[int, tuple[int, list[int]]]:
    """Started candidates: job index → (option, node indices), read from the 0/1 values."""
    v = x[pl.v.span] > 0.5
    w = x[pl.w.span] > 0.5
    started: dict[int, tuple[int, list[int]]] = {}
    for o in np.flatnonzero(v).tolist():
        nodes = pl.pair_node[(pl.pair_option == o) & w].tolist()
        started[int(inst.candidates[inst.options.candidate[o]])] = (o, nodes)
    return started


def start_vector(
    inst: Instance, pl: Placement, started: dict[int, tuple[int, list[int]]]
) -> tuple[np.ndarray, np.ndarray]:
    """The placement decisions (start, use) of `started` as a sparse MILP starting point."""
    v = np.zeros(pl.v.size)
    w = np.zeros(pl.w.size)
    pair_at = {
        (o, n): i
        for i, (o, n) in enumerate(zip(pl.pair_option.tolist(), pl.pair_node.tolist(), strict=True))
    }
    for o, nodes in started.values():
        v[o] = 1.0
        for n in nodes:
            w[pair_at[(o, n)]] = 1.0
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


def run(
    snapshot: Snapshot,
    problem: ClusterArrays,
    options: ContentionPlacementOptions,
    ctx: SolveContext,
) -> Outcome:
    if snapshot.nodes is None:
        raise InputError.single(("nodes",), "contention_placement places jobs on nodes: give them")
    inst = build_instance(
        snapshot, options.shapes, options.allow_single_node, options.contention_scope
    )
    started: dict[int, tuple[int, list[int]]] = {}
    status, solver_objective = Status.OPTIMAL, None
    if inst.options.size:
        model, placement = build(inst, options)
        first = greedy(inst, options.w1, options.penalty)
        solution = ctx.solve(model, start=start_vector(inst, placement, first))
        status, solver_objective = solution.status, solution.objective
        if not status.has_solution:
            return outcome_from(inst, problem, options, None, status, None)
        started = decode(inst, placement, solution.x)
        problems = check_feasible(inst, started)
        if problems:
            # Never hand a scheduler a placement that breaks the rules, whatever the solver said.
            return outcome_from(inst, problem, options, None, Status.ERROR, None, warnings=problems)
    evaluation: Evaluation = evaluate(inst, started, options.w1, options.penalty)
    return outcome_from(inst, problem, options, evaluation, status, solver_objective, started)


POLICY = Policy(
    name="contention_placement",
    summary="Start waiting jobs on nodes trading GPU utilization against network contention "
    "(DeepShare's reward, exact).",
    options=ContentionPlacementOptions,
    run=run,
    problem_class="MILP",
    aliases=("deepshare", "contention"),
)
