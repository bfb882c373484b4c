"""Explaining an allocation LP from its duals: per GPU type whether capacity binds and its shadow
price, per job the rows that hold it at its value and its reduced costs per GPU type.

Everything is read from the solver's duals (complementary slackness: a row with a non-zero dual
is tight in every optimum, so it is what holds the answer there) and from the allocation
itself (idle GPUs). Duals are reported in the policy's objective units (`LpStage.scale`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from apportion.solver.arrays import ClusterArrays
from apportion.solver.arraytypes import BoolArray, FloatArray
from apportion.solver.explain.codes import Reason
from apportion.solver.explain.words import JobFacts, group_texts
from apportion.solver.policy import AllocationEvidence, LpStage
from apportion.solver.result import GpuTypeExplanation, JobExplanation

#: A row holds the answer when its dual, in the model's own units (rows of order 1, as the
#: formulations scale them), moves the objective by more than this fraction of its value per
#: unit: simplex duals are exact to round-off, interior-point ones leave ~1e-9 on rows that are
#: not tight.
DUAL_TOLERANCE = 1e-6
#: Shadow prices below this fraction of the largest read as 0.
PRICE_TOLERANCE = 1e-7
#: Capacity binds when fewer GPUs than this fraction of it are idle.
IDLE_TOLERANCE = 1e-6


@dataclass(frozen=True)
class StagePrices:
    """One stage's duals in the policy's units, per group and per type, and which of the
    group rows hold the answer."""

    capacity: FloatArray  # (types,) ∂objective/∂N_k, NaN without a capacity block
    share: BoolArray  # (groups,) the share row (floor) holds
    time: BoolArray  # (groups,) the time row holds
    reduced: FloatArray  # (groups, types) per member, NaN where the group has no column


def stage_prices(stage: LpStage, groups: int, types: int, count: FloatArray) -> StagePrices:
    """Read a stage's duals (which must be present) into group and type space."""
    sol, scale = stage.solution, stage.scale
    capacity = np.full(types, np.nan)
    if stage.capacity is not None:
        capacity = scale * sol.dual(stage.capacity)
    floor = max(abs(sol.objective or 0.0), 1e-300) * DUAL_TOLERANCE
    share = np.zeros(groups, bool)
    if stage.share is not None:
        share = np.abs(sol.dual(stage.share)) > floor
    time = (
        np.abs(sol.dual(stage.time)) > floor if stage.time is not None else np.zeros(groups, bool)
    )
    reduced = np.full((groups, types), np.nan)
    reduced[stage.x_group, stage.x_gpu] = scale * sol.reduced_cost(stage.x) / count[stage.x_group]
    return StagePrices(capacity, share, time, reduced)


def gpu_explanations(
    problem: ClusterArrays,
    evidence: AllocationEvidence | None,
    used: FloatArray,
) -> tuple[list[GpuTypeExplanation], BoolArray]:
    """Per GPU type: binding, idle GPUs, and the capacity dual of every stage that has one."""
    count = problem.gpu_count
    idle = np.maximum(count - used, 0.0)
    binding = idle <= IDLE_TOLERANCE * np.maximum(count, 1.0)
    prices: dict[str, FloatArray] = {}
    for stage in evidence.stages if evidence is not None else ():
        if stage.has_duals and stage.capacity is not None:
            prices[stage.name] = _clean(stage.scale * stage.solution.dual(stage.capacity))
    priced = prices.get(evidence.priced) if evidence and evidence.priced else None
    out = [
        GpuTypeExplanation(
            name=name,
            binding=bool(binding[k]),
            idle=float(idle[k]),
            shadow_price=float(priced[k]) if priced is not None else None,
            prices={stage: float(values[k]) for stage, values in prices.items()},
        )
        for k, name in enumerate(problem.gpu_names)
    ]
    return out, binding


def job_explanations(
    problem: ClusterArrays,
    evidence: AllocationEvidence,
    allocation: FloatArray,
    binding: BoolArray,
    metrics: Mapping[str, NDArray[np.generic]],
) -> list[JobExplanation]:
    """One explanation per job, from the final stage's duals (and the priced stage's, for the
    bottleneck test); data reasons first, `unavailable` where the duals are missing."""
    final = evidence.stages[-1] if evidence.stages else None
    data = data_reasons(problem)
    groups, types = evidence.count.size, problem.num_types
    if final is None or not final.has_duals:
        return [
            JobExplanation(job_id, *data.get(j, unavailable(final is None)))
            for j, job_id in enumerate(problem.job_ids)
        ]
    last = stage_prices(final, groups, types, evidence.count)
    level_stage = next((s for s in evidence.stages if s.name == evidence.bottleneck), None)
    held = np.zeros(groups, bool)
    if level_stage is not None and level_stage.has_duals and level_stage.share is not None:
        held = stage_prices(level_stage, groups, types, evidence.count).share
    members = np.bincount(evidence.group[evidence.group >= 0], minlength=groups)
    facts = JobFacts(
        names=problem.gpu_names,
        level=evidence.level,
        level_name=evidence.level_name,
        bottleneck=held,
        bottlenecks=int(members[held].sum()),
        floor=last.share,
        full_time=last.time,
        capacity_price=np.nan_to_num(last.capacity),
        binding=binding,
        reduced=last.reduced,
        final_stage=final.name,
    )
    inside = evidence.group >= 0
    x = np.zeros((groups, types))
    x[evidence.group[inside]] = allocation[inside]  # identical within a group
    gpus = np.zeros(groups)
    gpus[evidence.group[inside]] = problem.scale_factor[inside]
    texts = group_texts(facts, evidence.labels, x, gpus)
    level = _column(metrics, "level")
    if level is None and evidence.level is not None:
        level = np.where(inside, evidence.level[np.maximum(evidence.group, 0)], np.nan).tolist()
    iteration = _column(metrics, "iteration") or [None] * problem.num_jobs
    out = []
    for j, (job_id, g) in enumerate(zip(problem.job_ids, evidence.group.tolist(), strict=True)):
        if j in data or g < 0:
            out.append(JobExplanation(job_id, *data.get(j, unavailable(True))))
            continue
        t = texts[g]
        value = level[j] if level is not None else None
        out.append(
            JobExplanation(job_id, t.code, t.why, t.rows, value, iteration[j], t.costs, t.gains)
        )
    return out


def data_reasons(problem: ClusterArrays) -> dict[int, tuple[str, str]]:
    """(code, words) for the jobs that no allocation can serve."""
    runs_nowhere: BoolArray = ~np.asarray((problem.throughput > 0).any(axis=1), dtype=bool)
    reasons = problem.unplaceable_reasons()
    return {
        j: (Reason.NO_THROUGHPUT if runs_nowhere[j] else Reason.GANG_DOES_NOT_FIT, text)
        for j, text in reasons.items()
    }


def unavailable(no_model: bool) -> tuple[str, str]:
    if no_model:
        return Reason.NOT_EXPLAINED, "no model was solved for this job: not explained"
    return Reason.UNAVAILABLE, "the solver reported no duals: not explained"


def _clean(values: FloatArray) -> FloatArray:
    """Interior-point round-off (1e-11 on an idle type) read as the 0 it is."""
    top = float(np.max(np.abs(values), initial=0.0))
    out: FloatArray = np.where(np.abs(values) <= PRICE_TOLERANCE * top, 0.0, values)
    return out


def _column(metrics: Mapping[str, NDArray[np.generic]], key: str) -> list[Any] | None:
    values = metrics.get(key)
    return None if values is None else list(np.asarray(values, dtype=object).tolist())
