"""Turn a scored placement into the policy's `Outcome`: placements, per-job metrics, summary."""

from __future__ import annotations

from typing import Any

import numpy as np

from apportion.formulations.placement.evaluate import Evaluation
from apportion.formulations.placement.instance import Instance, Started
from apportion.formulations.placement.options import ContentionPlacementOptions
from apportion.solver.arrays import ClusterArrays
from apportion.solver.policy import Outcome
from apportion.solver.status import Status

OBJECTIVE_NAME = "W2·utilization − W1·mean contention sensitivity"
REFERENCE_NAME = "W2·utilization − W1·mean(1 − 1/CS) over running jobs (DeepShare's reward)"
#: Solver and definition may differ by the MILP feasibility tolerance, no more.
AGREEMENT = 1e-6


def outcome_from(
    inst: Instance,
    problem: ClusterArrays,
    options: ContentionPlacementOptions,
    evaluation: Evaluation | None,
    status: Status,
    solver_objective: float | None,
    started: Started | None = None,
    warnings: list[str] | None = None,
) -> Outcome:
    allocation = np.zeros((problem.num_jobs, problem.num_types))
    warnings = list(warnings or [])
    name = REFERENCE_NAME if inst.reference else OBJECTIVE_NAME
    if evaluation is None:
        return Outcome(status, None, name, allocation, dict(inst.reasons), warnings=warnings)
    started = started or {}
    type_of = {node_id: int(t) for node_id, t in zip(inst.node_ids, inst.node_type, strict=True)}
    scale = problem.scale_factor
    for j, nodes in evaluation.placements.items():
        for node_id, gpus in nodes.items():
            # X_jk: the share of the job's gang on type k, so Σ_j s_j X_jk counts GPUs in use.
            allocation[j, type_of[node_id]] += gpus / scale[j]
    warnings.extend(_fallback_warnings(evaluation))
    if (
        solver_objective is not None
        and status is Status.OPTIMAL
        and abs(solver_objective - evaluation.objective) > AGREEMENT
    ):
        warnings.append(
            f"solver objective {solver_objective:.9g} differs from the placement's "
            f"{evaluation.objective:.9g}"
        )
    return Outcome(
        status,
        evaluation.objective,
        name,
        allocation,
        _reasons(inst, evaluation, started, status),
        job_metrics=_metrics(inst, evaluation, started),
        summary=_summary(inst, options, evaluation, started, solver_objective),
        warnings=warnings,
        placements=evaluation.placements,
    )


def _metrics(inst: Instance, ev: Evaluation, started: Started) -> dict[str, np.ndarray]:
    m = inst.num_jobs
    state = np.full(m, "waiting", dtype=object)
    state[inst.running] = "running"
    shape = np.full(m, None, dtype=object)
    for r, j in enumerate(inst.running):
        gpus = inst.running_gpus[r]
        per_node = int(gpus[0]) if (gpus == gpus[0]).all() else None
        shape[j] = f"{gpus.size}x{per_node}" if per_node else f"{gpus.size} nodes, uneven"
    for j, (o, _) in started.items():
        state[j] = "started"
        shape[j] = f"{inst.options.nodes[o]}x{inst.options.per_node[o]}"
    cs = np.array([None if np.isnan(v) else float(v) for v in ev.cs], dtype=object)
    return {
        "state": state,
        "shape": shape,
        "contention_sensitivity": cs,
        "worst_co_runner": np.array(ev.worst_co_runner, dtype=object),
        "cs_source": np.array(ev.source, dtype=object),
    }


def _reasons(inst: Instance, ev: Evaluation, started: Started, status: Status) -> dict[int, str]:
    reasons = dict(inst.reasons)
    residual = inst.free.copy()
    for o, nodes in started.values():
        residual[nodes] -= inst.options.per_node[o]
    opts = inst.options
    for position, j in enumerate(inst.candidates.tolist()):
        if j in started or j in reasons:
            continue
        mine = inst.options_of(position)
        fits = any(
            ((inst.node_type == opts.gpu_type[o]) & (residual >= opts.per_node[o])).sum()
            >= opts.nodes[o]
            for o in mine.tolist()
        )
        if not fits:
            reasons[j] = "not started: the jobs started now take the GPUs it could use"
        elif status is Status.OPTIMAL:
            reasons[j] = "not started: its contention would cost more than the utilization gained"
        else:
            reasons[j] = "not started in the best placement found within the limits"
    return reasons


def _summary(
    inst: Instance,
    options: ContentionPlacementOptions,
    ev: Evaluation,
    started: Started,
    solver_objective: float | None,
) -> dict[str, Any]:
    return {
        "w1": options.w1,
        "w2": 1.0 - options.w1,
        "penalty": options.penalty,
        "objective_form": options.objective,
        "utilization": ev.utilization,
        "gpus_used": ev.gpus_used,
        "gpus_total": inst.total_gpus,
        "mean_contention_all_jobs": ev.contention,
        "mean_contention_sensitivity": ev.mean_cs_running,
        "mean_throughput_loss": ev.mean_loss,
        "utilization_term": ev.utilization_term,
        "contention_term": ev.contention_term,
        "objective": ev.objective,
        "solver_objective": solver_objective,
        "running": int(inst.running.size),
        "started": len(started),
        "waiting": int(inst.candidates.size) - len(started),
        "cs_sources": dict(ev.sources),
    }


def unproven(status: Status, gap: float | None) -> list[str]:
    """Why an answer with a placement is not `optimal`: the limits stopped the search first."""
    if status not in (Status.FEASIBLE, Status.FALLBACK):
        return []
    found = "the greedy placement" if status is Status.FALLBACK else "the best placement found"
    proof = (
        f"within {gap:.3%} of the best bound"
        if gap is not None and np.isfinite(gap)
        else "no bound known"
    )
    return [f"not proven optimal within the limits: {found}, {proof}"]


def _fallback_warnings(ev: Evaluation) -> list[str]:
    guessed = {k: v for k, v in ev.sources.items() if k in ("nearest", "class_default", "default")}
    if not guessed:
        return []
    parts = ", ".join(f"{n} by {k.replace('_', ' ')}" for k, n in sorted(guessed.items()))
    return [f"co-located pairs without a measured contention entry: {parts}"]
