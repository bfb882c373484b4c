"""An independent reference for deadline admission, written from FORMULATIONS §6 alone.

Nothing here imports the policy: sizes, leases, usable slots, prices and the optimum are
recomputed from the snapshot, and the optimum by brute force over every integer choice (each
SLO job declined, or given L_j of the slots before its last usable one; the option it then
earns is the best one whose window holds them all).

The snapshots it reads are called at a lease boundary (`now` = the lease's start), without
overhead, safety margin or held GPUs:

- RU(g) = 2^⌈log2 g⌉ for g ≤ G, G·⌈g/G⌉ beyond; a job larger than the cluster can never run;
- L_j = ⌈E_j/ℓ⌉; option v is met when all L_j leases lie in the first M_v slots, with
  M_v = ⌊(d_v − now)/ℓ⌋, one more when a last lease begun at the start of slot M_v (its tail
  τ_j = E_j − (L_j − 1)ℓ) still ends by d_v;
- per slot Σ_j RU(g_j) x_{j,t} ≤ C (round-up sizes make GPU counts exact for placement);
- a guaranteed job is offered its options up to the promised `guaranteed_deadline`, and must
  get one: when not all guarantees can be kept, as few as possible are broken, then value (a
  guarantee no plan can keep, even alone, is simply lost; one traded for others is a
  `fallback`);
- `value` maximizes Σ w_{j,v}; `satisfaction` Σ a_{j,v} with a = w/w̄_j for guaranteed jobs and
  w/w̄_j − π ρ r_j L_j for new ones (offered only when a > 0), ρ = clip(Σ_j g_j/C − 1, 0, 1)
  over jobs with work left.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from apportion.solver import SolveResult

#: Two objective values closer than this (relative) are equal: float sums in another order.
TOLERANCE = 1e-9


def ru(gpus: int, per_node: int) -> int:
    """Round-up for power-of-two node sizes, as FORMULATIONS §6 states it."""
    if gpus > per_node:
        return per_node * math.ceil(gpus / per_node)
    return 1 << (gpus - 1).bit_length()


@dataclass(frozen=True)
class RefJob:
    """One SLO job in lease units: size, leases, and its offered options (M, worth)."""

    job_id: str
    size: int
    leases: int
    guaranteed: bool
    options: tuple[tuple[int, int, float], ...]  # (option index, M, worth a)
    fits: bool  # not larger than the cluster


@dataclass(frozen=True)
class Best:
    """The lexicographic optimum: guarantees kept, then objective."""

    kept: int
    objective: float


def usable_slots(deadline: float, remaining: float, lease: float, now: float) -> int:
    leases = math.ceil(remaining / lease)
    tail = remaining - (leases - 1) * lease
    m = math.floor((deadline - now) / lease)
    if m >= 0 and now + m * lease + tail <= deadline:
        m += 1
    return max(m, 0)


def pressure(snapshot: dict[str, Any]) -> float:
    capacity: int = sum(n["gpus"] for n in snapshot["nodes"])
    asked: int = sum(j["scale_factor"] for j in snapshot["jobs"] if j["remaining_time"] > 0)
    return min(max(asked / capacity - 1.0, 0.0), 1.0)


def slo_jobs(snapshot: dict[str, Any], objective: str, lease_price: float) -> list[RefJob]:
    per_node = snapshot["nodes"][0]["gpus"]
    capacity = per_node * len(snapshot["nodes"])
    lease, now = snapshot["lease_seconds"], snapshot["now"]
    rho = pressure(snapshot)
    out = []
    for job in snapshot["jobs"]:
        if not job.get("deadlines"):
            continue
        size = ru(job["scale_factor"], per_node)
        leases = math.ceil(job["remaining_time"] / lease)
        best = max(o["value"] for o in job["deadlines"])
        promised = job.get("guaranteed_deadline") if job.get("guaranteed") else None
        options = []
        for v, option in enumerate(job["deadlines"]):
            if promised is not None and option["time"] > promised:
                continue
            m = usable_slots(option["time"], job["remaining_time"], lease, now)
            worth = float(option["value"])
            if objective == "satisfaction":
                worth = option["value"] / best
                if not job.get("guaranteed"):
                    worth -= lease_price * rho * size * leases
                    if worth <= 0:
                        continue
            options.append((v, m, worth))
        fits = job["scale_factor"] <= capacity
        out.append(
            RefJob(job["id"], size, leases, bool(job.get("guaranteed")), tuple(options), fits)
        )
    return out


def keepable_alone(snapshot: dict[str, Any]) -> int:
    """Guaranteed jobs that could keep their guarantee on an empty cluster: when the answer
    keeps fewer, guarantees were traded against each other (status `fallback`)."""
    jobs = slo_jobs(snapshot, "value", 0.0)
    return sum(
        j.guaranteed and j.fits and any(m >= j.leases for _, m, _ in j.options) for j in jobs
    )


def earned(job: RefJob, last_slot: int) -> float | None:
    """The best worth among the options whose window holds a lease in `last_slot`."""
    worth = [w for _, m, w in job.options if last_slot < m]
    return max(worth) if worth else None


def brute_force(snapshot: dict[str, Any], objective: str, lease_price: float = 0.05) -> Best:
    """Every integer choice: each job declined or on any L_j slots of its longest window."""
    jobs = slo_jobs(snapshot, objective, lease_price)
    capacity = sum(n["gpus"] for n in snapshot["nodes"])
    horizon = max((m for j in jobs for _, m, _ in j.options), default=0)
    room = [capacity] * horizon
    best = Best(-1, -math.inf)

    def visit(k: int, kept: int, total: float) -> None:
        nonlocal best
        if k == len(jobs):
            best = max(best, Best(kept, total), key=lambda b: (b.kept, b.objective))
            return
        job = jobs[k]
        visit(k + 1, kept, total)  # declined (or a broken guarantee)
        if not job.fits or job.leases == 0:
            return
        reach = max((m for _, m, _ in job.options), default=0)
        for slots in combinations(range(reach), job.leases):
            worth = earned(job, slots[-1])
            if worth is None or any(room[t] < job.size for t in slots):
                continue
            for t in slots:
                room[t] -= job.size
            visit(k + 1, kept + job.guaranteed, total + worth)
            for t in slots:
                room[t] += job.size

    visit(0, 0, 0.0)
    return best


def read_answer(
    result: SolveResult, snapshot: dict[str, Any], objective: str, lease_price: float = 0.05
) -> Best:
    """Check the returned plan against the rules, from the snapshot alone; its (kept, objective)."""
    jobs = {j.job_id: j for j in slo_jobs(snapshot, objective, lease_price)}
    capacity = sum(n["gpus"] for n in snapshot["nodes"])
    used: dict[int, int] = {}
    kept, total = 0, 0.0
    for job in snapshot["jobs"]:
        metrics = result.job(job["id"]).metrics
        ref = jobs.get(job["id"])
        if ref is None or not metrics.get("guaranteed"):
            assert not metrics.get("slots"), f"{job['id']} has slots without a guarantee"
            continue
        assert ref.fits, f"{job['id']} is larger than the cluster yet guaranteed"
        offered = {v: (m, w) for v, m, w in ref.options}
        option, listed = metrics["option"], str(metrics["slots"])
        assert isinstance(option, int) and option in offered, f"{job['id']}: option {option}"
        m, worth = offered[option]
        slots = [int(t) for t in listed.split(",")]
        assert len(set(slots)) == ref.leases == len(slots), f"{job['id']}: {slots}"
        assert min(slots) >= 0 and max(slots) < m, f"{job['id']}: {slots} past its M = {m}"
        for t in slots:
            used[t] = used.get(t, 0) + ref.size
        kept += ref.guaranteed
        total += worth
    assert all(gpus <= capacity for gpus in used.values()), f"over capacity: {used}"
    return Best(kept, total)
