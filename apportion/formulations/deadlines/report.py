"""The deadline policy's answer in words and numbers: reasons, per-job metrics, totals."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from apportion.formulations.deadlines.decision import Admission, LeaseRun
from apportion.formulations.deadlines.lease_plan import LeasePlan
from apportion.formulations.deadlines.pricing import best_values
from apportion.formulations.deadlines.problem import LeaseProblem
from apportion.solver.arrays import ClusterArrays
from apportion.solver.policy import Outcome
from apportion.solver.status import Status

OBJECTIVE_NAMES = {
    "satisfaction": "satisfaction admitted, less the price of the GPU-leases reserved",
    "value": "value admitted",
}


def satisfaction(problem: LeaseProblem, plan: LeasePlan) -> float:
    """Σ over guaranteed jobs of the value of their option ÷ their best option's value."""
    best = best_values(problem)
    chosen = np.flatnonzero(plan.admitted)
    return float((problem.row_value[plan.row[chosen]] / best[chosen]).sum())


def cannot_fit(problem: LeaseProblem, j: int) -> str:
    """Why job j meets none of its deadlines even alone, in words."""
    if not problem.fits_cluster[j]:
        return too_large(problem, j)
    rows = problem.rows_of(j)
    latest = int(problem.row_slots_raw[rows].max())
    need = int(problem.leases[j])
    if np.isfinite(problem.done_by[j]):
        return f"ends at {problem.done_by[j]:g} in the lease it holds, after every deadline"
    first = int(problem.first_slot[j])
    if first > 0 and latest >= need:
        return (
            f"needs {need} leases of {problem.lease:g} s from slot {first} on (what is left of "
            f"the current lease or its hold comes first) but the latest deadline leaves {latest}"
        )
    if latest <= 0:
        return "every deadline is less than one lease away"
    if need > problem.horizon and latest > problem.horizon:
        return (
            f"needs {need} leases, beyond the planning horizon of {problem.horizon} slots "
            "(raise horizon_slots)"
        )
    return f"needs {need} leases of {problem.lease:g} s but the latest deadline leaves {latest}"


def too_large(problem: LeaseProblem, j: int) -> str:
    return (
        f"needs {problem.demand[j]} GPUs, larger than the cluster's {problem.capacity}: "
        "it can never run here"
    )


def broken_alone(problem: LeaseProblem, j: int) -> str:
    return f"guarantee broken: cannot finish by any deadline even alone: {cannot_fit(problem, j)}"


def broken_jointly(problem: LeaseProblem, j: int) -> str:
    latest = int(problem.row_slots[problem.rows_of(j)].max())
    return (
        f"guarantee broken: {problem.leases[j]} leases of {problem.reserve[j]} GPUs no longer fit "
        f"before slot {latest} next to the other guaranteed jobs (cluster shrank or estimates grew)"
    )


def slot_list(plan: LeasePlan, j: int) -> str:
    return ",".join(map(str, np.flatnonzero(plan.slots[j])))


def reasons(problem: LeaseProblem, admission: Admission, lease: LeaseRun) -> dict[int, str]:
    """Why each job is not guaranteed, broken, or not running this lease."""
    plan = admission.plan
    out: dict[int, str] = dict(admission.broken)
    has_option = np.zeros(problem.num_jobs, dtype=bool)
    has_option[problem.row_job[problem.row_feasible]] = True
    for j in range(problem.num_jobs):
        if j in out:
            continue
        slo, running = bool(problem.is_slo[j]), j in lease.placements
        if not slo and not problem.fits_cluster[j]:
            out[j] = f"best-effort: {too_large(problem, j)}"
        elif slo and not plan.admitted[j] and not has_option[j]:
            out[j] = f"not guaranteed: cannot finish before any deadline: {cannot_fit(problem, j)}"
        elif problem.leases[j] == 0:
            out[j] = "nothing left to run"
        elif slo and not plan.admitted[j]:
            out[j] = (
                f"not guaranteed: displaced by higher value (no room for {problem.leases[j]} "
                f"leases of {problem.reserve[j]} GPUs before its deadlines)"
            )
        elif slo and not running:
            out[j] = f"guaranteed; runs in its reserved slots {slot_list(plan, j)}, not this lease"
        elif not slo and not running:
            out[j] = f"best-effort: no room for {problem.demand[j]} GPUs now"
    return out


def job_metrics(
    problem: LeaseProblem, admission: Admission, lease: LeaseRun
) -> dict[str, NDArray[Any]]:
    """Per job, most telling first (the CLI table shows the first few)."""
    plan = admission.plan
    ok, slo, before = plan.admitted, problem.is_slo, problem.guaranteed
    picked = np.where(ok, plan.row, 0)

    def where_admitted(values: NDArray[Any], otherwise: object = None) -> NDArray[Any]:
        out = np.full(problem.num_jobs, otherwise, dtype=object)
        out[ok] = values[picked[ok]].tolist()
        return out

    state = np.where(
        ~slo,
        "best_effort",
        np.where(ok, np.where(before, "kept", "admitted"), np.where(before, "broken", "rejected")),
    )
    guaranteed = ok.astype(object)
    guaranteed[~slo] = None  # best-effort jobs are neither
    value = where_admitted(problem.row_value, 0.0)
    value[~slo] = None
    leases = problem.leases.astype(object)
    leases[~np.isfinite(problem.remaining)] = None  # no estimate given
    return {
        "guaranteed": guaranteed,
        "deadline": where_admitted(problem.row_time),
        "slots": np.array([slot_list(plan, j) for j in range(problem.num_jobs)], dtype=object),
        "runs_now": np.array([j in lease.placements for j in range(problem.num_jobs)], object),
        "gpus_now": np.array(
            [sum(lease.placements.get(j, {}).values()) for j in range(problem.num_jobs)], object
        ),
        "lease_use": np.array([lease.mode.get(j) for j in range(problem.num_jobs)], object),
        "lent_until": np.array([lease.lent_until.get(j) for j in range(problem.num_jobs)], object),
        "admission": state.astype(object),
        "class": np.array([k.value for k in problem.kind], dtype=object),
        "option": where_admitted(problem.row_option),
        "value": value,
        "leases_needed": leases,
        "reserved_gpus": np.where(ok, problem.reserve, 0).astype(object),
    }


def summary(problem: LeaseProblem, admission: Admission, lease: LeaseRun) -> dict[str, Any]:
    plan = admission.plan
    slo = problem.is_slo
    best_effort = np.flatnonzero(~slo)
    return {
        "value_admitted": plan.value(problem),
        "satisfaction_admitted": satisfaction(problem, plan),
        "value_admitted_greedy": admission.greedy_value,
        "guaranteed_jobs": int(plan.admitted.sum()),
        "newly_admitted": int((plan.admitted & ~problem.guaranteed).sum()),
        "not_admitted": int((slo & ~plan.admitted & ~problem.guaranteed).sum()),
        "guarantees_broken": [problem.job_ids[j] for j in sorted(admission.broken)],
        "reserved_gpus_per_slot": plan.reserved_per_slot(problem).tolist(),
        "idle_gpus": lease.idle,
        "running_now": len(lease.placements),
        "best_effort_started": int(sum(int(j) in lease.placements for j in best_effort)),
        "lent_gpus": int(
            sum(
                sum(lease.placements[j].values()) for j in lease.lent_until if j in lease.placements
            )
        ),
        "gpus": problem.capacity,
        "nodes": len(problem.node_ids),
        "gpus_per_node": problem.gpus_per_node,
        "lease_seconds": problem.lease,
        "lease_start": problem.lease_start,
        "held_gpus": int(sum(sum(p.values()) for p in problem.holdings.nodes.values())),
        "slots": problem.horizon,
        "sigma": admission.sigma,
        "admission": "greedy fallback" if admission.status is Status.FALLBACK else "milp",
        "mip_gap": admission.mip_gap,
    }


def outcome(
    problem: LeaseProblem,
    arrays: ClusterArrays,
    admission: Admission,
    lease: LeaseRun,
    scored: tuple[str, LeaseProblem],
) -> Outcome:
    """X = 1 on the nodes' GPU type for jobs running this lease; placements by node id."""
    allocation = np.zeros((problem.num_jobs, arrays.num_types))
    allocation[list(lease.placements), problem.gpu_column] = 1.0
    warnings = list(admission.warnings)
    warnings += [f"{problem.job_ids[j]}: {why}" for j, why in sorted(admission.broken.items())]
    return Outcome(
        status=admission.status,
        objective=admission.plan.value(scored[1]),
        objective_name=OBJECTIVE_NAMES[scored[0]],
        allocation=allocation,
        reasons=reasons(problem, admission, lease),
        job_metrics=job_metrics(problem, admission, lease),
        summary=summary(problem, admission, lease),
        warnings=warnings,
        placements={
            j: {problem.node_ids[n]: gpus for n, gpus in p.items()}
            for j, p in lease.placements.items()
        },
        mip_gap=admission.mip_gap,
        detail=admission.detail,
        termination=admission.termination,
    )
