"""The explanation block of a result, from an outcome's evidence (see `evidence.py`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from apportion.solver.arrays import ClusterArrays
from apportion.solver.arraytypes import FloatArray
from apportion.solver.explain.allocation import (
    data_reasons,
    gpu_explanations,
    job_explanations,
)
from apportion.solver.explain.codes import Reason
from apportion.solver.policy import AllocationEvidence, DecisionEvidence, Evidence
from apportion.solver.result import Explanation, JobExplanation, Metric, StageInfo

NO_EVIDENCE = "this policy hands no evidence to explain its answer: only data reasons are given"
NO_DUALS = "the solver reported no duals for the final model: per-job reasons are unavailable"


def explain(
    problem: ClusterArrays,
    evidence: Evidence | None,
    allocation: FloatArray,
    used: FloatArray,
    metrics: Mapping[str, NDArray[Any]],
) -> Explanation:
    """The `explanation` block: GPU types always (binding and idle are read from the
    allocation), shadow prices and per-job reasons as far as the evidence goes."""
    allocation_evidence = evidence if isinstance(evidence, AllocationEvidence) else None
    gpus, binding = gpu_explanations(problem, allocation_evidence, used)
    if isinstance(evidence, DecisionEvidence):
        if evidence.prices is not None:
            for usage, price in zip(gpus, evidence.prices.tolist(), strict=True):
                usage.shadow_price = price if np.isfinite(price) else None
        return Explanation(
            available=True,
            note=evidence.note,
            price_stage=evidence.price_stage if evidence.prices is not None else None,
            gpu_types=gpus,
            jobs=decision_jobs(problem, evidence),
        )
    if allocation_evidence is None:
        data = data_reasons(problem)
        late = unreachable_deadlines(problem)
        jobs = []
        for j, job_id in enumerate(problem.job_ids):
            if j in data or j not in late:
                jobs.append(JobExplanation(job_id, *data.get(j, (Reason.NOT_EXPLAINED, ""))))
                continue
            text = (
                f"cannot finish by its deadline even alone on its fastest type (at {late[j]:.6g})"
            )
            detail: dict[str, Metric] = {"earliest_alone": late[j]}
            jobs.append(JobExplanation(job_id, Reason.DEADLINE_UNREACHABLE, text, detail=detail))
        return Explanation(
            available=False, note=NO_EVIDENCE, price_stage=None, gpu_types=gpus, jobs=jobs
        )
    return _allocation(problem, allocation_evidence, allocation, binding, gpus, metrics)


def _allocation(
    problem: ClusterArrays,
    evidence: AllocationEvidence,
    allocation: FloatArray,
    binding: NDArray[np.bool_],
    gpus: list[Any],
    metrics: Mapping[str, NDArray[Any]],
) -> Explanation:
    stages = [
        StageInfo(name=s.name, objective=s.objective, duals=s.has_duals) for s in evidence.stages
    ]
    final = evidence.stages[-1] if evidence.stages else None
    available = final is None or final.has_duals
    notes = [evidence.note] if evidence.note else []
    if not available:
        notes.append(NO_DUALS)
    priced = next((s for s in evidence.stages if s.name == evidence.priced), None)
    if priced is not None and priced.has_duals:
        notes.append(f"shadow prices are for the {priced.name} stage: {priced.objective}")
    return Explanation(
        available=available,
        note="; ".join(notes),
        price_stage=priced.name if priced is not None and priced.has_duals else None,
        stages=stages,
        gpu_types=gpus,
        jobs=job_explanations(problem, evidence, allocation, binding, metrics),
    )


def unreachable_deadlines(problem: ClusterArrays) -> dict[int, float]:
    """Jobs whose deadline is before `now + R_j / max_k T_jk` (their fastest type where the
    gang fits, all of the time from now): no policy can meet it. Value: that earliest finish."""
    if problem.now is None:
        return {}
    fastest = np.where(problem.eligible, problem.throughput, 0.0).max(axis=1, initial=0.0)
    earliest = problem.now + np.divide(
        problem.steps_remaining, fastest, out=np.full(problem.num_jobs, np.inf), where=fastest > 0
    )
    late = np.flatnonzero(np.isfinite(earliest) & (earliest > problem.deadline))
    return dict(zip(late.tolist(), earliest[late].tolist(), strict=True))


def decision_jobs(problem: ClusterArrays, evidence: DecisionEvidence) -> list[JobExplanation]:
    """A MILP policy's reason per job; jobs without one were granted what they asked for."""
    data = data_reasons(problem)
    out = []
    for j, job_id in enumerate(problem.job_ids):
        if j in evidence.codes:
            code, text = evidence.codes[j], evidence.texts.get(j, "")
        elif j in data:
            code, text = data[j]
        else:
            code, text = Reason.GRANTED, evidence.granted
        out.append(
            JobExplanation(
                job_id, code, text, evidence.rows.get(j, []), detail=evidence.detail.get(j, {})
            )
        )
    return out
