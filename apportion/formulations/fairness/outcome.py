"""Outcomes of the share-LP policies: levels, iterations and space-sharing details per job."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from apportion.formulations.fairness.levels import REPAIR_TOLERANCE, Levels
from apportion.formulations.fairness.share_input import ShareInput
from apportion.formulations.fairness.share_result import JobAnswer
from apportion.solver.arrays import ClusterArrays
from apportion.solver.policy import Outcome
from apportion.solver.status import Status

OBJECTIVE = "minimum normalized share"


def empty_outcome(problem: ClusterArrays, prepared: ShareInput, status: Status) -> Outcome:
    """No allocation: no job can run anywhere (OPTIMAL), or the first solve failed."""
    allocation = np.zeros((problem.num_jobs, problem.num_types))
    return Outcome(
        status,
        None,
        OBJECTIVE,
        allocation,
        problem.unplaceable_reasons(),
        warnings=list(prepared.warnings),
        merged_groups=prepared.structure.size if prepared.structure is not None else None,
    )


def levels_outcome(
    problem: ClusterArrays, prepared: ShareInput, levels: Levels, answer: JobAnswer | None
) -> Outcome:
    """Water filling's answer, with each job's level and iteration."""
    if answer is None:
        failed = levels.failure
        if failed is None or failed.status.has_solution:
            # A point that is not a certified optimum (e.g. a first-order solver's) cannot
            # tell bottlenecks apart: no level can be trusted, so there is no allocation.
            outcome = empty_outcome(problem, prepared, Status.ERROR)
            detail = f" ({failed.status.value}: {failed.detail})" if failed else ""
            outcome.warnings.append(
                f"the first level LP was not solved to optimality{detail}; water filling needs "
                "exact levels: use a simplex or interior-point solver"
            )
            return outcome
        return empty_outcome(problem, prepared, failed.status)
    warnings = []
    if levels.failure is not None:
        warnings.append(
            f"water filling stopped at iteration {levels.iterations}: the level LP ended "
            f"{levels.failure.status.value} ({levels.failure.detail}); jobs not yet frozen keep "
            "at least the last level"
        )
    s = prepared.structure
    assert s is not None
    weight = np.where(np.isnan(levels.weight), s.weight, levels.weight)
    inverse = s.groups.inverse
    metrics = {
        "level": _per_job(problem, prepared.jobs, levels.level[inverse]),
        "iteration": _per_job(problem, prepared.jobs, levels.iteration[inverse]),
    }
    if s.num_entities > 1 or not np.allclose(s.entity_weight, 1.0):
        metrics["effective_weight"] = _per_job(problem, prepared.jobs, weight[inverse])
    frozen = levels.level[~np.isnan(levels.level)]
    top = max(float(np.abs(frozen).max(initial=0.0)), 1e-300)
    summary = {
        "iterations": levels.iterations,
        "bottleneck_tests": levels.tests,
        "distinct_levels": int(np.unique(np.round(frozen / top, 9)).size),
    }
    status = Status.OPTIMAL if levels.failure is None else Status.FEASIBLE
    return shares_outcome(problem, prepared, answer, status, weight, metrics, summary, warnings)


def shares_outcome(
    problem: ClusterArrays,
    prepared: ShareInput,
    answer: JobAnswer,
    status: Status,
    weight: NDArray[np.float64],
    metrics: dict[str, NDArray[Any]],
    summary: dict[str, Any],
    warnings: list[str],
) -> Outcome:
    """The common part: normalized shares u = v / w', space-sharing details, repair check."""
    s = prepared.structure
    assert s is not None
    warnings = [*prepared.warnings, *warnings]
    if answer.repair > REPAIR_TOLERANCE:
        status = Status.FEASIBLE if status is Status.OPTIMAL else status
        warnings.append(f"solver answer violated constraints by {answer.repair:.2e}; scaled back")
    if answer.shortfall > REPAIR_TOLERANCE:
        # Never an allocation called optimal that gives a job less than its level promised.
        status = Status.FEASIBLE if status is Status.OPTIMAL else status
        warnings.append(
            f"a job's share is {answer.shortfall:.2e} (relative) below the level the LP found: "
            "the shares are finer than the solver can resolve"
        )
    group_share = answer.group_value / weight
    share = np.zeros(problem.num_jobs)
    share[prepared.jobs] = group_share[s.groups.inverse]
    if prepared.pairs is not None:
        metrics["shared_time"] = _per_job(problem, prepared.jobs, answer.shared_time[prepared.jobs])
        summary["space_sharing"] = prepared.pairs.summary()
        summary["pair_allocations"] = answer.pair_allocations
    return Outcome(
        status,
        float(group_share.min()),
        OBJECTIVE,
        answer.allocation,
        problem.unplaceable_reasons(),
        job_metrics=metrics,
        summary=summary,
        warnings=warnings,
        normalized_share=share,
        merged_groups=s.size,
        effective_throughput=answer.effective_throughput,
        gpu_used=answer.gpu_used,
    )


def _per_job(problem: ClusterArrays, jobs: NDArray[np.int64], values: NDArray[Any]) -> NDArray[Any]:
    """A metric column with None for the jobs left out of the LP."""
    out = np.full(problem.num_jobs, None, dtype=object)
    clean = [None if isinstance(v, float) and np.isnan(v) else v for v in values.tolist()]
    out[jobs] = clean
    return out
