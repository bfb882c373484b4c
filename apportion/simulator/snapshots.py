"""The snapshot a policy sees at a decision point: the cluster and its active jobs, as JSON.

One builder per enactment mode, each giving exactly the fields its policy family reads (the
snapshot's schema: docs/authors/snapshot.md): time fractions for rounds, leases and deadlines for
admission, nodes and running placements for contention placement. Built as plain dicts so the
same document goes to `solver.solve` in process or to POST /v1/solve.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from itertools import combinations, product
from typing import Any, NamedTuple

import numpy as np

from apportion.simulator.state import JobStates
from apportion.solver.arraytypes import FloatArray, IntArray

FTF_POLICIES = frozenset({"finish_time_fairness", "ftf", "themis", "finish_time_fairness_agnostic"})
HIERARCHICAL = frozenset({"hierarchical", "hierarchical_fairness", "hierarchical_max_min_fairness"})
#: The owner of jobs a trace leaves without one, under a hierarchical policy (which needs every
#: job to name an entity): one entity, so the policy reduces to water filling among them.
DEFAULT_ENTITY = "default"


def cluster_part(table: JobStates) -> dict[str, Any]:
    nodes = table.trace.cluster.nodes
    return {
        "gpu_types": [
            {"name": k, "count": int(c)} for k, c in zip(table.types, table.capacity, strict=True)
        ],
        "nodes": [{"id": n.id, "gpus": n.gpus, "gpu_type": n.gpu_type} for n in nodes],
    }


def isolated_throughput(
    table: JobStates, jobs: IntArray, contenders: float | FloatArray
) -> FloatArray:
    """Throughput on each job's equal share of the cluster among `contenders` jobs (one number,
    or one per job) (Themis, FORMULATIONS §3): 1/m of every type, in whole gangs of s_j, capped
    at all of its time."""
    many = np.maximum(np.broadcast_to(np.asarray(contenders, dtype=float), jobs.shape), 1.0)
    share = table.capacity[None, :] / many[:, None] / table.scale[jobs, None]
    share = np.where(table.thr[jobs] > 0, share, 0.0)
    total = share.sum(axis=1, keepdims=True)
    share = np.where(total > 1.0, share / np.maximum(total, 1e-300), share)
    iso: FloatArray = (share * table.thr[jobs]).sum(axis=1)
    return iso


def rounds_snapshot(
    table: JobStates,
    jobs: IntArray,
    now: float,
    policy: str,
    options: Mapping[str, Any],
    entity_weights: Mapping[str, float],
) -> dict[str, Any]:
    """Time-fraction policies: throughputs, work left, ages, weights, owners, deadlines."""
    trace_jobs = table.trace.jobs
    remaining = table.remaining[jobs].tolist()
    since = (now - table.arrival[jobs]).clip(0).tolist()
    entries = []
    for position, j in enumerate(jobs.tolist()):
        job = trace_jobs[j]
        entry: dict[str, Any] = {
            "id": job.id,
            "scale_factor": job.scale_factor,
            "weight": job.weight,
            "throughput": {k: v for k, v in job.throughput.items() if v > 0},
            "steps_remaining": remaining[position],
            "time_since_start": since[position],
            "arrival_time": job.arrival,
        }
        if job.workload_class is not None:
            entry["workload_class"] = job.workload_class
        if job.entity is not None:
            entry["entity"] = job.entity
        elif policy in HIERARCHICAL:
            entry["entity"] = DEFAULT_ENTITY
        if job.deadlines:
            entry["deadline"] = job.deadlines[0].time
        entries.append(entry)
    if policy in FTF_POLICIES and jobs.size:
        # Work already done, in the time it would have taken on the isolated share.
        iso = isolated_throughput(table, jobs, float(jobs.size))
        done = (table.total[jobs] - table.remaining[jobs]) / np.maximum(iso, 1e-300)
        for entry, value in zip(entries, done.tolist(), strict=True):
            entry["isolated_time_done"] = value
    document: dict[str, Any] = {**cluster_part(table), "jobs": entries, "now": now}
    owners = sorted({e["entity"] for e in entries if "entity" in e})
    if owners:
        document["entities"] = [{"id": e, "weight": entity_weights.get(e, 1.0)} for e in owners]
    if options.get("space_sharing") is True:
        document["job_pairs"] = job_pairs(table, jobs)
    return document


def type_blind(document: Mapping[str, Any]) -> dict[str, Any]:
    """The snapshot as a heterogeneity-agnostic policy sees it: every job at one throughput on
    each GPU type it can use, Σ_k N_k T_jk / Σ_k N_k over those types (what it makes on an
    average GPU of theirs), so time anywhere it runs looks alike."""
    counts = {g["name"]: g["count"] for g in document["gpu_types"]}
    jobs = []
    for entry in document["jobs"]:
        usable = entry["throughput"]
        gpus = sum(counts[k] for k in usable)
        mean = sum(counts[k] * t for k, t in usable.items()) / gpus if gpus else 0.0
        jobs.append({**entry, "throughput": dict.fromkeys(usable, mean)})
    return {**document, "jobs": jobs}


def job_pairs(table: JobStates, jobs: IntArray) -> list[dict[str, Any]]:
    """Every pair of active jobs with equal scale factors whose classes the trace measured
    together, with each member's co-located throughput per type."""
    trace_jobs = table.trace.jobs
    groups: dict[tuple[str, int], list[int]] = defaultdict(list)
    for j in jobs.tolist():
        job = trace_jobs[j]
        if job.workload_class is not None and job.pairs:
            groups[(job.workload_class, job.scale_factor)].append(j)
    pairs = []
    keys = sorted(groups)
    for g, h in [(g, g) for g in keys] + list(combinations(keys, 2)):
        if g[1] != h[1]:
            continue
        measured = trace_jobs[groups[g][0]].pairs.get(h[0])
        if not measured:
            continue
        usable = {k: [a, b] for k, (a, b) in measured.items() if a > 0 and b > 0}
        if not usable:
            continue
        members = combinations(groups[g], 2) if g == h else product(groups[g], groups[h])
        pairs += [{"a": table.ids[a], "b": table.ids[b], "throughput": usable} for a, b in members]
    return pairs


class Held(NamedTuple):
    """A job that runs now: where, and until when it holds those GPUs (not after `now`: it
    holds nothing, and may be moved or stopped)."""

    placement: Mapping[str, int]
    until: float


def lease_snapshot(
    table: JobStates,
    jobs: IntArray,
    now: float,
    lease_seconds: float,
    lease_start: float | None = None,
    held: Mapping[int, Held] | None = None,
    overhead: FloatArray | None = None,
    promised: Mapping[int, float] | None = None,
) -> dict[str, Any]:
    """Deadline admission: GPU demand, remaining time at full speed, deadlines, which jobs an
    earlier answer guaranteed and by which deadline (`promised`), the lease grid's phase, where
    running jobs run and which of them hold their GPUs in this lease (their remaining time then
    includes the restore cost they still pay), and each job's restart overhead (`overhead`, one
    per job of `jobs`)."""
    trace_jobs = table.trace.jobs
    held = held or {}
    speed = table.thr[jobs].max(axis=1)
    left = (table.remaining[jobs] / np.maximum(speed, 1e-300)).tolist()
    costs = None if overhead is None else overhead.tolist()
    entries = []
    for position, j in enumerate(jobs.tolist()):
        job = trace_jobs[j]
        entry: dict[str, Any] = {
            "id": job.id,
            "scale_factor": job.scale_factor,
            "remaining_time": left[position],
            "arrival_time": job.arrival,
        }
        if costs is not None:
            entry["overhead_seconds"] = costs[position]
        if j in held:
            entry["placement"] = dict(held[j].placement)
            if held[j].until > now:
                entry["remaining_time"] += float(table.delay_left[j])
                entry["held_until"] = held[j].until
        if job.deadlines:
            entry["deadlines"] = [{"time": d.time, "value": d.value} for d in job.deadlines]
            entry["guaranteed"] = bool(table.guaranteed[j])
            if entry["guaranteed"] and promised and j in promised:
                entry["guaranteed_deadline"] = promised[j]
        if job.job_class is not None:
            entry["job_class"] = job.job_class
        elif not job.deadlines:
            entry["job_class"] = "best_effort"
        entries.append(entry)
    document = {**cluster_part(table), "jobs": entries, "now": now, "lease_seconds": lease_seconds}
    if lease_start is not None:
        document["lease_start"] = lease_start
    return document


def placement_snapshot(
    table: JobStates,
    jobs: IntArray,
    placements: Mapping[int, Mapping[str, int]],
    contention: Mapping[str, Any] | None,
    now: float = 0.0,
) -> dict[str, Any]:
    """Contention placement: nodes, the CS table (`contention`, already as JSON: it is the same
    at every event), running jobs where they run, every job's demand, the types it can use, its
    work left and its seconds run so far (the schedule objective's priorities), and its speed
    per spread where the trace measured it."""
    trace_jobs = table.trace.jobs
    remaining = table.remaining[jobs].tolist()
    attained = table.run_seconds[jobs].tolist()
    entries = []
    for position, j in enumerate(jobs.tolist()):
        job = trace_jobs[j]
        entry: dict[str, Any] = {
            "id": job.id,
            "throughput": {k: v for k, v in job.throughput.items() if v > 0},
            "scale_factor": job.scale_factor,
            "steps_remaining": remaining[position],
            "attained_service": attained[position],
        }
        if job.workload_class is not None:
            entry["workload_class"] = job.workload_class
        if job.placement_throughput:
            entry["spread_throughput"] = {str(k): v for k, v in job.placement_throughput.items()}
        if j in placements:
            entry["placement"] = dict(placements[j])
        entries.append(entry)
    document: dict[str, Any] = {**cluster_part(table), "jobs": entries, "now": now}
    if contention is not None:
        document["contention"] = contention
    return document
