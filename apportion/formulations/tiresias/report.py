"""A Tiresias decision as the policy's `Outcome`: who runs where, why each waiting job waits,
each job's queue and priority, and when the answer goes stale.

Why a waiting job waits (`wait_reason`), checked in this order:

- `shape`: enough GPUs of a type it can use are left, but not on its fewest nodes (a sensitive
  gang that would not be consolidated);
- `higher_queue`: what jobs of higher queues hold leaves too few GPUs (or no node shape) for it;
- `own_queue`: jobs of its own queue took them (2D-LAS: earlier starts; the exact admission: more
  of the queue's jobs fit that way);
- `preemption_cap`: lower-queue jobs kept their GPUs because of the cap on preemptions;
- `greedy`: Tiresias's greedy admission passed it over (admission `greedy`);
- `limits`: the answer is the best found within the limits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from apportion.formulations.tiresias.greedy import Decision
from apportion.formulations.tiresias.instance import Instance
from apportion.formulations.tiresias.placing import fits_consolidated
from apportion.formulations.tiresias.queues import Queues
from apportion.solver.arrays import ClusterArrays
from apportion.solver.arraytypes import IntArray
from apportion.solver.policy import Outcome
from apportion.solver.status import Status

OBJECTIVE = "jobs running: the most of each queue in turn, then fewest preemptions, then priority"
REASONS = {
    "shape": "waiting: no node shape fits: {free} GPUs free on {type}, not on {fewest} node(s)",
    "higher_queue": "waiting: jobs of higher queues took the GPUs",
    "own_queue": "waiting: jobs of its own queue took the GPUs",
    "preemption_cap": "waiting: lower-queue jobs kept their GPUs under the preemption cap",
    "greedy": "waiting: the greedy admission passed it over",
    "limits": "waiting in the best answer found within the limits",
}


@dataclass(frozen=True)
class Report:
    """What the run learned, beyond the decision, for the outcome."""

    status: Status
    levels: list[str]
    revisit: float | None
    thresholds: list[float]
    exact: bool = True
    gap: float | None = None


def outcome_from(
    inst: Instance, problem: ClusterArrays, queues: Queues, d: Decision, r: Report
) -> Outcome:
    runs = d.runs
    placements = _placements(inst, d)
    allocation = np.zeros((problem.num_jobs, problem.num_types))
    kind = inst.run_type.copy()
    for j, (k, _) in d.started.items():
        kind[j] = k
    on = np.flatnonzero(runs)
    allocation[on, kind[on]] = 1.0
    codes = _wait_reasons(inst, queues, d, r)
    reasons = dict(inst.reasons)
    for j, (_, text) in codes.items():
        reasons[j] = text
    return Outcome(
        r.status,
        float(runs.sum()),
        OBJECTIVE,
        allocation,
        reasons,
        job_metrics=_metrics(inst, queues, d, placements, {j: c for j, (c, _) in codes.items()}),
        summary=_summary(inst, queues, d, r),
        placements=placements,
        mip_gap=r.gap,
    )


def _placements(inst: Instance, d: Decision) -> dict[int, dict[str, int]]:
    out: dict[int, dict[str, int]] = {}
    ids = inst.node_ids
    for j in np.flatnonzero(d.kept).tolist():
        nodes, gpus = inst.holding(j)
        out[j] = {ids[n]: g for n, g in zip(nodes.tolist(), gpus.tolist(), strict=True)}
    for j, (_, pieces) in d.started.items():
        out[j] = {inst.node_ids[n]: g for n, g in sorted(pieces.items())}
    return out


def _metrics(
    inst: Instance,
    queues: Queues,
    d: Decision,
    placements: dict[int, dict[str, int]],
    codes: dict[int, str],
) -> dict[str, np.ndarray]:
    m = inst.num_jobs
    state = np.full(m, "waiting", dtype=object)
    state[inst.running] = "preempted"
    state[d.kept] = "running"
    state[list(d.started)] = "started"
    state[~inst.schedulable & ~inst.running] = "unschedulable"
    code = np.full(m, None, dtype=object)
    for j, c in codes.items():
        code[j] = c
    nodes = np.full(m, np.nan)
    for j, p in placements.items():
        nodes[j] = len(p)
    return {
        "state": state,
        "queue": queues.queue + 1,
        "priority": queues.priority,
        "rank": queues.rank + 1,
        "promoted": queues.promoted,
        "sensitive": inst.sensitive,
        "skew": inst.skew,
        "nodes": nodes,
        "wait_reason": code,
    }


def _summary(inst: Instance, queues: Queues, d: Decision, r: Report) -> dict[str, Any]:
    runs = d.runs
    count = max(queues.count, len(r.thresholds) + 1)
    sched = inst.schedulable
    per_queue = [
        {
            "queue": q + 1,
            "jobs": int((sched & (queues.queue == q)).sum()),
            "running": int((runs & (queues.queue == q)).sum()),
            "gpus": int(inst.gang[runs & (queues.queue == q)].sum()),
        }
        for q in range(count)
    ]
    stopped = inst.running & ~d.kept
    return {
        "queues": per_queue,
        "thresholds": r.thresholds,
        "running": int(runs.sum()),
        "started": len(d.started),
        "preempted": int(stopped.sum()),
        "preemption_cost_gpu_seconds": float(inst.cost[stopped].sum()),
        "promoted": int(queues.promoted.sum()),
        "gpus_used": int(inst.gang[runs].sum()),
        "gpus_total": int(inst.node_gpus.sum()),
        "levels": r.levels,
        "revisit_after": r.revisit,
    }


def _wait_reasons(
    inst: Instance, queues: Queues, d: Decision, r: Report
) -> dict[int, tuple[str, str]]:
    runs = d.runs
    waiting = np.flatnonzero(inst.schedulable & ~runs & ~inst.running)
    stopped = np.flatnonzero(inst.running & ~runs)
    # GPUs per node held by the jobs of each queue and above, once for all waiting jobs:
    # above[q] is what queues < q hold, upto[q] what queues ≤ q hold.
    upto = np.cumsum(_use_by_queue(inst, queues, d), axis=0)
    above = np.vstack([np.zeros((1, inst.node_gpus.size), dtype=np.int64), upto[:-1]])
    out: dict[int, tuple[str, str]] = {}
    for j in [*waiting.tolist(), *stopped.tolist()]:
        q = queues.queue[j]
        shape = _shape_only(inst, upto[-1], j)
        if shape is not None:
            out[j] = ("shape", REASONS["shape"].format(**shape))
        elif _fit_type(inst, inst.node_gpus - above[q], j) is None:
            out[j] = ("higher_queue", REASONS["higher_queue"])
        elif _fit_type(inst, inst.node_gpus - upto[q], j) is None:
            out[j] = ("own_queue", REASONS["own_queue"])
        elif not r.exact:
            out[j] = ("greedy", REASONS["greedy"])
        elif r.status is Status.OPTIMAL:
            out[j] = ("preemption_cap", REASONS["preemption_cap"])
        else:
            out[j] = ("limits", REASONS["limits"])
    return out


def _use_by_queue(inst: Instance, queues: Queues, d: Decision) -> IntArray:
    """(queues × nodes) GPUs the decision's running jobs of each queue hold on each node."""
    count = max(queues.count, 1)
    kept = np.flatnonzero(d.kept)
    held = inst.held[kept].tocoo()
    use = np.zeros((count, inst.node_gpus.size), dtype=np.int64)
    np.add.at(use, (queues.queue[kept[held.row]], held.col), held.data.astype(np.int64))
    for j, (_, pieces) in d.started.items():
        for n, g in pieces.items():
            use[queues.queue[j], n] += g
    return use


def _fit_type(inst: Instance, free: IntArray, j: int) -> int | None:
    g = int(inst.gang[j])
    for k in np.flatnonzero(inst.usable[j]).tolist():
        on_type = np.flatnonzero(inst.node_type == k)
        if inst.sensitive[j]:
            if fits_consolidated(free, on_type, g, int(inst.fewest[j, k])):
                return k
        elif free[on_type].sum() >= g:
            return k
    return None


def _shape_only(inst: Instance, used: IntArray, j: int) -> dict[str, Any] | None:
    """For a sensitive gang: the type with enough free GPUs left but not on its fewest nodes,
    given the GPUs per node every running job holds (`used`)."""
    if not inst.sensitive[j]:
        return None
    free = inst.node_gpus - used
    g = int(inst.gang[j])
    for k in np.flatnonzero(inst.usable[j]).tolist():
        on_type = np.flatnonzero(inst.node_type == k)
        left = int(free[on_type].sum())
        if left >= g and not fits_consolidated(free, on_type, g, int(inst.fewest[j, k])):
            return {"free": left, "type": inst.type_names[k], "fewest": int(inst.fewest[j, k])}
    return None
