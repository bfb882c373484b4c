"""Deadline snapshots: a Philly-like generator and the Chronus artifact's trace (MIX2 head).

The trace fixture (`chronus_mix2_head200.json`) holds the first 200 jobs of the Chronus
artifact's Philly MIX2 trace (MIT, S-Lab System Group): GPU demand, submit time and true duration
in minutes, deadlines relative to submission in minutes, their values, and the class.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from apportion.refdata import SOURCE

MIX2_HEAD = SOURCE / "chronus_mix2_head200.json"

#: Soft deadlines in the trace sit at growing multiples of the first one, worth 10/8/5/2.
SOFT_STRETCH = (1.0, 1.2, 1.45, 1.8)
SOFT_VALUES = (10.0, 8.0, 5.0, 2.0)
STRICT_VALUE = 10.0
# A heavier GPU mix than Philly's (92 % single-GPU) so that 120 nodes are contended.
SIZES = (1, 2, 4, 8, 16, 32)
SIZE_MIX = (0.20, 0.10, 0.15, 0.30, 0.15, 0.10)


def load_mix2_head() -> list[dict[str, Any]]:
    return list(json.loads(MIX2_HEAD.read_text())["jobs"])


def philly_like_snapshot(
    nodes: int = 120,
    slo_jobs: int = 400,
    best_effort_jobs: int = 1_000,
    max_slots: int = 72,
    guaranteed_share: float = 0.6,
    gpus_per_node: int = 8,
    lease: float = 1200.0,
    seed: int = 0,
) -> dict[str, Any]:
    """SLO jobs (2/3 soft, 1/3 strict, as in MIX2) with deadlines up to `max_slots` leases ahead,
    a share of them already guaranteed (a set that provably fits), plus best-effort jobs."""
    rng = np.random.default_rng(seed)
    capacity = nodes * gpus_per_node
    size = rng.choice(SIZES, size=slo_jobs, p=SIZE_MIX)
    need = np.clip(np.round(rng.lognormal(np.log(14), 0.7, slo_jobs)), 1, max_slots // 2).astype(
        int
    )
    first = np.minimum(np.ceil(need * rng.uniform(1.1, 2.5, slo_jobs)), max_slots).astype(int)
    soft = rng.random(slo_jobs) < 2 / 3
    free = np.full(max_slots, capacity)
    jobs = []
    for j in range(slo_jobs):
        stretch = SOFT_STRETCH if soft[j] else (1.0,)
        slots = sorted({min(max_slots, int(np.ceil(first[j] * f))) for f in stretch})
        values = SOFT_VALUES[: len(slots)] if soft[j] else (STRICT_VALUE,)
        guaranteed = bool(rng.random() < guaranteed_share) and _reserve(
            free, slots[-1], int(need[j]), int(size[j])
        )
        jobs.append(
            {
                "id": f"slo-{j}",
                "scale_factor": int(size[j]),
                "remaining_time": float(need[j] * lease - rng.uniform(0, lease / 2)),
                "job_class": "soft" if soft[j] else "strict",
                "deadlines": [
                    {"time": float(t * lease), "value": v}
                    for t, v in zip(slots, values, strict=False)
                ],
                "guaranteed": guaranteed,
            }
        )
    be_size = rng.choice(SIZES[:4], size=best_effort_jobs, p=(0.6, 0.15, 0.15, 0.1))
    for j in range(best_effort_jobs):
        jobs.append(
            {
                "id": f"be-{j}",
                "scale_factor": int(be_size[j]),
                "remaining_time": float(rng.lognormal(np.log(3 * lease), 1.0)),
                "job_class": "best_effort",
            }
        )
    return {
        "policy": "deadline_admission",
        "gpu_types": [{"name": "v100", "count": capacity}],
        "nodes": [{"id": f"node-{n}", "gpus": gpus_per_node} for n in range(nodes)],
        "lease_seconds": lease,
        "now": 0.0,
        "jobs": jobs,
    }


def _reserve(free: np.ndarray, before: int, count: int, size: int) -> bool:
    """Take `count` latest slots before `before` with `size` GPUs free, if there are enough."""
    from apportion.formulations.deadlines.problem import round_up

    reserve = int(round_up(np.array([size]), 8)[0])
    room = np.flatnonzero(free[:before] >= reserve)
    if room.size < count:
        return False
    free[room[-count:]] -= reserve
    return True


@dataclass
class ReplayJob:
    id: str
    gpus: int
    submit: float  # seconds
    remaining: float  # true seconds of work left
    deadlines: list[float]  # absolute seconds
    values: list[float]
    guaranteed: bool = False
    promised: float | None = None  # deadline of the option chosen in the latest answer
    finished: float | None = None


@dataclass
class ReplayStats:
    leases: int = 0
    solves: int = 0
    fallbacks: int = 0
    broken: int = 0
    solve_seconds: float = 0.0
    jobs: list[ReplayJob] = field(default_factory=list)

    @property
    def guaranteed(self) -> list[ReplayJob]:
        return [j for j in self.jobs if j.guaranteed]

    @property
    def value_earned(self) -> float:
        """Value of the first (earliest) deadline met by each SLO job, as the artifact scores."""
        total = 0.0
        for job in self.jobs:
            met = [
                v
                for d, v in zip(job.deadlines, job.values, strict=True)
                if job.finished is not None and job.finished <= d + 1e-6
            ]
            total += met[0] if met else 0.0
        return total


def replay_jobs(trace: list[dict[str, Any]]) -> list[ReplayJob]:
    """Trace rows (minutes) as replay jobs (seconds); the simulator's 0-GPU rows are skipped."""
    out = []
    for row in trace:
        if row["num_gpu"] == 0:
            continue
        submit = 60.0 * row["submit_minute"]
        out.append(
            ReplayJob(
                id=row["id"],
                gpus=int(row["num_gpu"]),
                submit=submit,
                remaining=60.0 * row["duration_minutes"],
                deadlines=[submit + 60.0 * d for d in row["deadline_minutes"]],
                values=list(row["values"]),
            )
        )
    return out


def replay(
    jobs: list[ReplayJob], nodes: int, lease: float = 1200.0, options: dict[str, Any] | None = None
) -> ReplayStats:
    """Step lease by lease: at each boundary, solve a snapshot of the submitted, unfinished jobs
    (exact remaining times, earlier guarantees flagged), run what the answer runs for one lease.
    Leases with nothing submitted are skipped."""
    from apportion.solver import solve

    stats = ReplayStats(jobs=jobs)
    now = 0.0
    while any(j.finished is None for j in jobs):
        active = [j for j in jobs if j.submit <= now and j.finished is None]
        if not active:
            upcoming = min(j.submit for j in jobs if j.finished is None)
            now = lease * np.ceil(upcoming / lease)
            continue
        result = solve(_snapshot(active, nodes, lease, now), options=options)
        stats.leases += 1
        stats.solves += 1
        stats.fallbacks += result.status.value == "fallback"
        stats.broken += len(result.summary["guarantees_broken"])
        stats.solve_seconds += result.solver.total_seconds
        for job, answer in zip(active, result.jobs, strict=True):
            if answer.metrics.get("guaranteed"):
                job.guaranteed, job.promised = True, float(answer.metrics["deadline"] or 0.0)
            if answer.metrics["runs_now"]:
                job.remaining -= lease
                if job.remaining <= 0:
                    job.finished = now + lease + job.remaining
        now += lease
    return stats


def _snapshot(active: list[ReplayJob], nodes: int, lease: float, now: float) -> dict[str, Any]:
    jobs = []
    for job in active:
        item: dict[str, Any] = {
            "id": job.id,
            "scale_factor": job.gpus,
            "remaining_time": job.remaining,
        }
        if job.deadlines:
            item["deadlines"] = [
                {"time": d, "value": v} for d, v in zip(job.deadlines, job.values, strict=True)
            ]
            item["guaranteed"] = job.guaranteed
        else:
            item["job_class"] = "best_effort"
        jobs.append(item)
    return {
        "policy": "deadline_admission",
        "gpu_types": [{"name": "v100", "count": 8 * nodes}],
        "nodes": [{"id": f"node-{n}", "gpus": 8} for n in range(nodes)],
        "lease_seconds": lease,
        "now": now,
        "jobs": jobs,
    }
