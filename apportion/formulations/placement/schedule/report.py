"""A scored schedule as the policy's `Outcome`: placements, per-job states and metrics, the
reason a job does not run, the summary, and reason codes for explanations.

States: a running job is `kept` (stays), `moved` or `preempted`; a waiting job `started` or
`waiting`. Reasons (codes of docs/EXPLANATIONS.md): a job that runs is `granted` next to no job
that slows it, else `contention_penalty` (its CS, its worst co-runner); a job that does not run
`capacity` when no allowed shape fits the GPUs the running jobs leave, `lower_value` when it
fits but the schedule is worth more without it (proven only with status optimal), and the
reason of `instance` when it was never offered (`gang_does_not_fit` for no allowed shape).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from apportion.formulations.placement.report import fallback_warnings
from apportion.formulations.placement.schedule.evaluate import Decision, Scored, held_by
from apportion.formulations.placement.schedule.instance import ScheduleInstance
from apportion.formulations.placement.schedule.search import Found
from apportion.solver.arrays import ClusterArrays
from apportion.solver.explain.codes import Reason
from apportion.solver.policy import DecisionEvidence, Outcome
from apportion.solver.status import Status

NAME = (
    "W2·priority-weighted GPUs − W1·GPUs' throughput lost to contention − W2·restarts "
    "(÷ cluster GPUs)"
)


def schedule_outcome(
    inst: ScheduleInstance, problem: ClusterArrays, found: Found, summary: dict[str, Any]
) -> Outcome:
    scored = found.scored
    allocation = np.zeros((problem.num_jobs, problem.num_types))
    type_of = {n: int(t) for n, t in zip(inst.node_ids, inst.node_type, strict=True)}
    for j, nodes in scored.placements.items():
        for node_id, gpus in nodes.items():
            allocation[j, type_of[node_id]] += gpus / problem.scale_factor[j]
    codes, texts = _reasons(inst, found)
    state = _states(inst, found.decision, scored)
    return Outcome(
        found.status,
        scored.objective,
        NAME,
        allocation,
        {j: texts[j] for j in texts if j not in scored.placements},
        job_metrics=_metrics(inst, found.decision, scored, state, problem.num_jobs),
        summary={**summary, **_summary(inst, found, state)},
        warnings=[*found.problems, *fallback_warnings(scored.sources)],
        placements=scored.placements,
        solution=found.solution,
        termination=found.termination,
        detail=found.detail,
        mip_gap=found.gap,
        evidence=DecisionEvidence(codes, texts, note="reasons read from the schedule"),
    )


def _states(inst: ScheduleInstance, decision: Decision, scored: Scored) -> dict[int, str]:
    state: dict[int, str] = {}
    for position in range(inst.size):
        j = int(inst.index[position])
        if inst.running[position]:
            if position in scored.moved:
                state[j] = "moved"
            else:
                state[j] = "kept" if position in decision else "preempted"
        else:
            state[j] = "started" if position in decision else "waiting"
    return state


def _metrics(
    inst: ScheduleInstance, decision: Decision, scored: Scored, state: dict[int, str], m: int
) -> dict[str, np.ndarray]:
    out = {
        name: np.full(m, None, dtype=object)
        for name in (
            "state",
            "shape",
            "contention_sensitivity",
            "worst_co_runner",
            "cs_source",
            "priority_level",
        )
    }
    out["state"][:] = "waiting"
    ids = inst.job_ids
    for position in range(inst.size):
        j = int(inst.index[position])
        out["state"][j] = state[j]
        out["priority_level"][j] = int(inst.level[position])
        if position in decision:
            nodes = held_by(inst, {position: decision[position]})[position]
            pieces = set(nodes.values())
            out["shape"][j] = f"{len(nodes)}x{pieces.pop()}" if len(pieces) == 1 else "uneven"
            out["contention_sensitivity"][j] = 1.0 / (1.0 - float(scored.loss[position]))
            worst = scored.worst[position]
            out["worst_co_runner"][j] = ids[worst] if worst is not None else None
            out["cs_source"][j] = scored.worst_source[position]
    return out


def _reasons(inst: ScheduleInstance, found: Found) -> tuple[dict[int, str], dict[int, str]]:
    codes: dict[int, str] = {}
    texts: dict[int, str] = {}
    for j, text in inst.reasons.items():
        codes[j] = Reason.GANG_DOES_NOT_FIT if "no allowed shape" in text else Reason.CAPACITY
        texts[j] = text
    free = inst.node_gpus.copy()
    for nodes in held_by(inst, found.decision).values():
        for n, gpus in nodes.items():
            free[n] -= gpus
    ch, scored = inst.choices, found.scored
    for position in range(inst.size):
        j = int(inst.index[position])
        if position in found.decision:
            worst = scored.worst[position]
            if worst is None:
                codes[j], texts[j] = Reason.GRANTED, "runs next to no job that slows it"
            else:
                cs = 1.0 / (1.0 - float(scored.loss[position]))
                codes[j] = Reason.CONTENTION_PENALTY
                texts[j] = f"runs at CS {cs:.3g} next to {inst.job_ids[worst]}"
            continue
        mine = np.flatnonzero((ch.job == position) & ~ch.stay)
        fits = any(
            ((inst.node_type == ch.gpu_type[o]) & (free >= ch.per_node[o])).sum() >= ch.nodes[o]
            for o in mine.tolist()
        )
        verb = "preempted" if inst.running[position] else "not started"
        if not fits:
            codes[j] = Reason.CAPACITY
            texts[j] = f"{verb}: the jobs that run take the GPUs it could use"
        elif found.status is Status.OPTIMAL:
            codes[j] = Reason.LOWER_VALUE
            texts[j] = f"{verb}: the contention it adds costs more than its GPUs are worth"
        else:
            codes[j] = Reason.NOT_EXPLAINED
            texts[j] = f"{verb} in the best schedule found within the limits"
    return codes, texts


def _summary(inst: ScheduleInstance, found: Found, state: dict[int, str]) -> dict[str, Any]:
    scored = found.scored
    counts = {name: 0 for name in ("kept", "moved", "preempted", "started", "waiting")}
    for value in state.values():
        counts[value] += 1
    runs = ~np.isnan(scored.loss)
    return {
        "utilization": scored.gpus_used / inst.total_gpus if inst.total_gpus else 0.0,
        "gpus_used": scored.gpus_used,
        "gpus_total": inst.total_gpus,
        "value_term": scored.value_term,
        "contention_term": scored.contention_term,
        "restart_term": scored.restart_term,
        "objective": scored.objective,
        "mean_throughput_loss": float(scored.loss[runs].mean()) if runs.any() else None,
        "priority_levels": inst.levels,
        "cs_sources": dict(scored.sources),
        "candidates": int((~inst.running).sum()),
        **counts,
    }
