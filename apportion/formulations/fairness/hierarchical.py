"""Hierarchical max-min fairness: entities with weights, then fairness or FIFO inside each
(FORMULATIONS §1b, Gavel's hierarchical policy).

Water filling (`formulations/fairness/water_filling.py`) whose weights are recomputed before every
level LP over the jobs still active. A job's effective weight is

    fairness entity e:  w'_j = W_e · w_j / Σ_{l ∈ e active} w_l
    fifo entity e:      w'_j = W_e for e's oldest active job (arrival_time, then snapshot
                        order), 0 for its other jobs until they become the oldest

and the level LP maximizes t with s_j·eff_j / prop_j ≥ w'_j · t for active jobs, frozen jobs
keeping what they froze at. In the share LP this is one level variable per entity,
z_e = W_e t / σ_e with σ_e = Σ_{active} n_g w_g (fairness) or 1 (fifo), so a weight change is
one coefficient. When no job saturates, every entity e receives a total normalized throughput
Σ_{j∈e} s_j eff_j / prop_j = W_e · t: the shares follow the entity weights exactly.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from apportion.formulations.fairness.common import (
    FairnessOptions,
    policy_eligible,
    policy_throughput,
)
from apportion.formulations.fairness.levels import WeightRule
from apportion.formulations.fairness.run import solve_levels
from apportion.formulations.fairness.share_input import Entities, share_input
from apportion.formulations.fairness.share_lp import ShareStructure
from apportion.solver.arrays import ClusterArrays
from apportion.solver.arraytypes import BoolArray, FloatArray
from apportion.solver.context import SolveContext
from apportion.solver.errors import FieldError, InputError
from apportion.solver.policy import Outcome, Policy
from apportion.solver.snapshot import Snapshot


class HierarchicalOptions(FairnessOptions):
    pass


def snapshot_entities(snapshot: Snapshot) -> Entities:
    """The snapshot's entities as arrays; every job must name one of them."""
    if not snapshot.entities:
        raise InputError.single(
            ("snapshot", "entities"),
            "the hierarchical policy needs the snapshot's entities (id, weight, policy)",
        )
    index = {e.id: i for i, e in enumerate(snapshot.entities)}
    missing = [
        FieldError(
            ("snapshot", "jobs", j, "entity"),
            f"job {job.id!r} names no entity; the hierarchical policy needs one per job",
            "missing_entity",
        )
        for j, job in enumerate(snapshot.jobs)
        if job.entity is None
    ]
    if missing:
        raise InputError(missing)
    return Entities(
        of_job=np.array([index[job.entity or ""] for job in snapshot.jobs], dtype=np.int64),
        weight=np.array([e.weight for e in snapshot.entities]),
        names=[e.id for e in snapshot.entities],
        fifo=np.array([e.policy == "fifo" for e in snapshot.entities]),
    )


def entity_rule(fifo: BoolArray, order: FloatArray) -> Callable[[ShareStructure], WeightRule]:
    """Weights of the next level from the active groups; `order` ranks groups by age."""

    def make(s: ShareStructure) -> WeightRule:
        in_fifo = fifo[s.entity]

        def rule(active: BoolArray) -> tuple[FloatArray, FloatArray]:
            live = np.where(active, s.groups.count * s.weight, 0.0)
            sigma = np.bincount(s.entity, weights=live, minlength=s.num_entities).astype(float)
            omega = np.where(active & ~in_fifo, s.weight, 0.0)
            queued = np.flatnonzero(active & in_fifo)
            if queued.size:
                # Oldest per entity: sort by (entity, age), keep each entity's first.
                ranked = queued[np.lexsort((order[queued], s.entity[queued]))]
                first = np.r_[True, np.diff(s.entity[ranked]) != 0]
                omega[ranked[first]] = 1.0
                sigma[s.entity[ranked[first]]] = 1.0
            return omega, sigma

        return rule

    return make


def arrival_order(snapshot: Snapshot, problem: ClusterArrays) -> FloatArray:
    """Rank of each job by arrival time (missing = after every given one), then position."""
    arrival = np.where(np.isnan(problem.arrival_time), np.inf, problem.arrival_time)
    rank = np.empty(problem.num_jobs)
    rank[np.lexsort((np.arange(problem.num_jobs), arrival))] = np.arange(problem.num_jobs)
    return rank


def run(
    snapshot: Snapshot, problem: ClusterArrays, options: HierarchicalOptions, ctx: SolveContext
) -> Outcome:
    options.check()
    entities = snapshot_entities(snapshot)
    aware, definition = options.heterogeneity_aware, options.agnostic_definition
    throughput = policy_throughput(problem, aware, definition)
    eligible = policy_eligible(problem, aware, definition)
    prepared = share_input(
        snapshot,
        problem,
        throughput,
        entities,
        merge=ctx.options.merge_identical,
        space_sharing=options.space_sharing,
        prune=options.prune_pairs,
        eligible=eligible,
    )
    rank = arrival_order(snapshot, problem)
    group_rank = (
        rank[prepared.structure.groups.representative] if prepared.structure is not None else rank
    )
    # Weights change between levels: every level's bottlenecks must be settled before the next.
    rule = entity_rule(entities.fifo, group_rank)
    outcome = solve_levels(problem, prepared, rule, ctx, exact=True, pareto=options.pareto)
    outcome = outcome.summarized(entities=entity_summary(problem, entities, outcome, throughput))
    return explain_fifo_waits(problem, entities, outcome, eligible)


def explain_fifo_waits(
    problem: ClusterArrays, entities: Entities, outcome: Outcome, eligible: BoolArray
) -> Outcome:
    """Jobs left with nothing in a FIFO entity: their turn came once the entity's older jobs
    froze, and by then the types they can run on were in full use (the final answer is
    Pareto-efficient, so an idle GPU would have gone to them). Say so, naming the types."""
    if not outcome.status.has_solution or outcome.effective_throughput is None:
        return outcome
    eff = outcome.effective_throughput
    idle = eff <= 1e-7 * float(eff.max(initial=0.0))  # interior points leave ~1e-9 crumbs
    used = outcome.gpu_used
    if used is None:
        used = problem.scale_factor @ outcome.allocation
    full = used >= problem.gpu_count * (1.0 - 1e-7)
    waiting: dict[int, str] = {}
    for j in np.flatnonzero(idle & entities.fifo[entities.of_job]):
        name = entities.names[entities.of_job[j]]
        types = np.flatnonzero(eligible[j])
        listed = ", ".join(problem.gpu_names[k] for k in types)
        waiting[int(j)] = (
            f"entity {name!r} is FIFO: by this job's turn, after its older jobs, every GPU type "
            f"it can run on ({listed}) was in full use"
            if full[types].all()
            else f"entity {name!r} is FIFO: its turn came after its older jobs, and it "
            "received no time"
        )
    return outcome.but(reasons={**waiting, **outcome.reasons})


def entity_summary(
    problem: ClusterArrays, entities: Entities, outcome: Outcome, throughput: FloatArray
) -> list[dict[str, object]]:
    """Per entity: jobs, effective throughput and its share of the normalized throughput
    Σ s_j eff_j / prop_j, the quantity the entity weights divide."""
    eff = outcome.effective_throughput
    if eff is None:
        eff = np.einsum("jk,jk->j", problem.throughput, outcome.allocation)
    prop = throughput @ problem.gpu_count / problem.gpu_count.sum()
    scaled = problem.scale_factor * np.einsum("jk,jk->j", throughput, outcome.allocation)
    if outcome.effective_throughput is not None and throughput is problem.throughput:
        scaled = problem.scale_factor * eff
    normalized = np.divide(scaled, prop, out=np.zeros_like(scaled), where=prop > 0)
    e = entities.of_job
    size = entities.weight.size
    totals = np.bincount(e, weights=normalized, minlength=size)
    grand = max(float(totals.sum()), 1e-300)
    return [
        {
            "id": name,
            "weight": float(entities.weight[i]),
            "policy": "fifo" if entities.fifo[i] else "fairness",
            "jobs": int((e == i).sum()),
            "effective_throughput": float(eff[e == i].sum()),
            "normalized_throughput": float(totals[i]),
            "share": float(totals[i] / grand),
        }
        for i, name in enumerate(entities.names)
    ]


POLICY = Policy(
    name="hierarchical",
    summary="Weighted max-min fairness across entities, fairness or FIFO inside each, by water "
    "filling with per-level weights (Gavel hierarchical).",
    options=HierarchicalOptions,
    run=run,
    problem_class="LP sequence",
)
