"""An independent reference for deadline admission, written from FORMULATIONS §6 alone.

Nothing here imports the policy: sizes, leases, usable slots, prices and the optimum are
recomputed from the snapshot, and the optimum by brute force over every integer choice (each
SLO job declined, or given L_j of the slots of its longest window; the option it then earns is
the best one whose window holds them all).

The snapshots it reads may be called mid-lease (`lease_start` ≤ now, see `work`):

- RU(g) = 2^⌈log2 g⌉ for g ≤ G, G·⌈g/G⌉ beyond; a job larger than the cluster can never run;
- work is counted in leases of u_j = ℓ − o_j (o_j: the job's `overhead_seconds`, else the
  option's) on E'_j = (1 + m) E_j (m: `safety_margin`); a job holding GPUs until T (`placement`,
  `held_until`) keeps them in its first h_j = ⌈(T − lease_start)/ℓ⌉ slots, does T − now there
  and needs L_j = ⌈(E'_j − (T − now))/u_j⌉ leases from slot h_j on (none: it ends at now + E'_j
  and meets exactly the deadlines from then on); others L_j = ⌈E'_j/u_j⌉ from slot 0;
- option v is met when all L_j leases lie in the first M_v slots, M_v = ⌊(d_v − lease_start)/ℓ⌋,
  one more when a last lease begun at the start of slot M_v (at now in slot 0; its tail τ_j: the
  work left less the leases before it) still ends by d_v, o_j + τ_j after it starts;
- per slot and chain size s of 1 | 2 | 4 | … | G, Σ_{r_j ≥ s} r_j x_{j,t} ≤ s Σ_n ⌊f_n/s⌋ (f_n:
  GPUs node n has free of holders; with none held, the plain capacity row);
- a guaranteed job is offered its options up to the promised `guaranteed_deadline`, and must
  get one: when not all guarantees can be kept, as few as possible are broken, then value (a
  guarantee no plan can keep, even alone, is simply lost; one traded for others is a
  `fallback`);
- `value` maximizes Σ w_{j,v}; `satisfaction` Σ a_{j,v} with a = w/w̄_j for guaranteed jobs and
  w/w̄_j − π ρ r_j L_j for new ones (offered only when a > 0), ρ = clip(Σ_j g_j/C − 1, 0, 1)
  over jobs with leases left to plan (a holder that ends within its hold asks for none).
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
    """One SLO job in lease units: size, first plannable slot, leases, offered options."""

    job_id: str
    size: int
    first: int
    leases: int
    guaranteed: bool
    options: tuple[tuple[int, int, float], ...]  # (option index, M, worth a)
    fits: bool  # not larger than the cluster

    def earned(self, slots: tuple[int, ...]) -> float | None:
        """The best worth among the options met by leases in `slots` (None: none met)."""
        if self.leases == 0:
            worth = [w for _, m, w in self.options if m >= 1]
        else:
            worth = [w for _, m, w in self.options if slots[-1] < m]
        return max(worth) if worth else None


@dataclass(frozen=True)
class Best:
    """The lexicographic optimum: guarantees kept, then objective."""

    kept: int
    objective: float


@dataclass(frozen=True)
class Work:
    """What a job still has to do, in lease units."""

    first: int  # h_j
    leases: int  # L_j
    tail: float  # τ_j
    overhead: float  # o_j
    ends: float  # now + E'_j for a holder that ends within its hold, else inf


def work(job: dict[str, Any], snapshot: dict[str, Any], options: dict[str, Any]) -> Work:
    """h_j, L_j and τ_j. Mid-lease (`lease_start` < now) a job started now gets w_j = lease_start
    + ℓ − now − o_j of slot 0: a new job may be planned there when ⌈(E'_j − w_j)/u_j⌉ ≤ L_j − 1,
    and is then counted with the larger tail E'_j − w_j − (L_j − 2)u_j (L_j ≥ 2); a guaranteed job
    that holds nothing is planned from slot 1 when starting in slot 0 would leave it that larger
    tail (a plan made earlier in the lease stays valid); with one lease the tails agree."""
    lease, now = snapshot["lease_seconds"], snapshot["now"]
    start = snapshot.get("lease_start", now)
    overhead = job.get("overhead_seconds", options.get("overhead_seconds", 0.0))
    stretched = (1 + options.get("safety_margin", 0.0)) * job["remaining_time"]
    unit = lease - overhead
    if "held_until" in job:
        first, left = math.ceil((job["held_until"] - start) / lease), stretched
        left -= job["held_until"] - now
        if left <= 0:
            return Work(first, 0, 0.0, overhead, now + stretched)
        leases = math.ceil(left / unit)
        return Work(first, leases, left - (leases - 1) * unit, overhead, math.inf)
    leases = math.ceil(stretched / unit)
    tail = stretched - (leases - 1) * unit
    if now == start:
        return Work(0, leases, tail, overhead, math.inf)
    if job.get("guaranteed") and leases >= 2:
        return Work(1, leases, tail, overhead, math.inf)
    slot_zero = start + lease - now - overhead
    if math.ceil((stretched - slot_zero) / unit) > leases - 1:
        return Work(1, leases, tail, overhead, math.inf)
    if leases >= 2:
        tail = stretched - slot_zero - (leases - 2) * unit
    return Work(0, leases, tail, overhead, math.inf)


def usable_slots(deadline: float, done: Work, snapshot: dict[str, Any]) -> int:
    """M_v; for a holder that ends within its hold, 0 when it ends too late (else 1)."""
    lease: float = snapshot["lease_seconds"]
    now: float = snapshot["now"]
    start: float = snapshot.get("lease_start", now)
    if done.leases == 0:
        return 0 if done.ends > deadline else 1
    m = math.floor((deadline - start) / lease)
    if m >= 0 and max(start + m * lease, now) + done.overhead + done.tail <= deadline:
        m += 1
    return max(m, 0)


def pressure(snapshot: dict[str, Any], options: dict[str, Any]) -> float:
    capacity: int = sum(n["gpus"] for n in snapshot["nodes"])
    asked: int = sum(
        j["scale_factor"] for j in snapshot["jobs"] if work(j, snapshot, options).leases > 0
    )
    return min(max(asked / capacity - 1.0, 0.0), 1.0)


def slo_jobs(snapshot: dict[str, Any], options: dict[str, Any]) -> list[RefJob]:
    """The SLO jobs with the worth of each option they are offered under `options`."""
    objective = options.get("objective", "satisfaction")
    per_node = snapshot["nodes"][0]["gpus"]
    capacity = per_node * len(snapshot["nodes"])
    rho = pressure(snapshot, options)
    price = options.get("lease_price", 0.05)
    out = []
    for job in snapshot["jobs"]:
        if not job.get("deadlines"):
            continue
        size, done = ru(job["scale_factor"], per_node), work(job, snapshot, options)
        best = max(o["value"] for o in job["deadlines"])
        promised = job.get("guaranteed_deadline") if job.get("guaranteed") else None
        offered = []
        for v, option in enumerate(job["deadlines"]):
            if promised is not None and option["time"] > promised:
                continue
            worth = float(option["value"])
            if objective == "satisfaction":
                worth = option["value"] / best
                if not job.get("guaranteed"):
                    worth -= price * rho * size * done.leases
                    if worth <= 0:
                        continue
            offered.append((v, usable_slots(option["time"], done, snapshot), worth))
        fits = job["scale_factor"] <= capacity
        guaranteed = bool(job.get("guaranteed"))
        out.append(
            RefJob(job["id"], size, done.first, done.leases, guaranteed, tuple(offered), fits)
        )
    return out


def keepable_alone(snapshot: dict[str, Any], options: dict[str, Any]) -> int:
    """Guaranteed jobs with an option their windows allow on their own: when the answer keeps
    fewer, guarantees were traded against each other (status `fallback`)."""
    return sum(
        j.guaranteed
        and j.fits
        and any((m >= 1) if j.leases == 0 else (m - j.first >= j.leases) for _, m, _ in j.options)
        for j in slo_jobs(snapshot, {**options, "objective": "value"})
    )


class Slots:
    """Reservations per slot against the level rows of what the holders leave free."""

    def __init__(self, snapshot: dict[str, Any], horizon: int) -> None:
        self.per_node = snapshot["nodes"][0]["gpus"]
        self.chain = [1 << k for k in range(self.per_node.bit_length()) if 1 << k <= self.per_node]
        free = {n["id"]: [n["gpus"]] * horizon for n in snapshot["nodes"]}
        for job in snapshot["jobs"]:
            for t in range(min(work(job, snapshot, {}).first, horizon)):
                for node, gpus in job.get("placement", {}).items():
                    free[node][t] -= gpus
        self.caps = [
            {s: s * sum(f[t] // s for f in free.values()) for s in self.chain}
            for t in range(horizon)
        ]
        self.used = [dict.fromkeys(self.chain, 0) for _ in range(horizon)]

    def take(self, size: int, slots: tuple[int, ...], sign: int = 1) -> bool:
        """Reserve `size` in `slots` (sign −1: release); False, changing nothing, if it does
        not fit."""
        levels = [s for s in self.chain if size >= s]
        if sign > 0 and any(
            self.used[t][s] + size > self.caps[t][s] for t in slots for s in levels
        ):
            return False
        for t in slots:
            for s in levels:
                self.used[t][s] += sign * size
        return True


def brute_force(snapshot: dict[str, Any], options: dict[str, Any]) -> Best:
    """Every integer choice: each job declined or on any L_j slots of its longest window."""
    jobs = slo_jobs(snapshot, options)
    horizon = max((m for j in jobs for _, m, _ in j.options), default=0)
    room = Slots(snapshot, horizon)
    best = Best(-1, -math.inf)

    def visit(k: int, kept: int, total: float) -> None:
        nonlocal best
        if k == len(jobs):
            best = max(best, Best(kept, total), key=lambda b: (b.kept, b.objective))
            return
        job = jobs[k]
        visit(k + 1, kept, total)  # declined (or a broken guarantee)
        if not job.fits:
            return
        reach = max((m for _, m, _ in job.options), default=0)
        for slots in combinations(range(job.first, reach), job.leases):
            worth = job.earned(slots)
            if worth is None or not room.take(job.size, slots):
                continue
            visit(k + 1, kept + job.guaranteed, total + worth)
            room.take(job.size, slots, -1)

    visit(0, 0, 0.0)
    return best


def read_answer(result: SolveResult, snapshot: dict[str, Any], options: dict[str, Any]) -> Best:
    """Check the returned plan against the rules, from the snapshot alone; its (kept, objective)."""
    jobs = {j.job_id: j for j in slo_jobs(snapshot, options)}
    room = Slots(snapshot, max((m for j in jobs.values() for _, m, _ in j.options), default=0))
    kept, total = 0, 0.0
    for job in snapshot["jobs"]:
        metrics = result.job(job["id"]).metrics
        ref = jobs.get(job["id"])
        if ref is None or not metrics.get("guaranteed"):
            assert not metrics.get("slots"), f"{job['id']} has slots without a guarantee"
            continue
        assert ref.fits, f"{job['id']} is larger than the cluster yet guaranteed"
        offered = {v: (m, w) for v, m, w in ref.options}
        option, listed = metrics["option"], str(metrics["slots"] or "")
        assert isinstance(option, int) and option in offered, f"{job['id']}: option {option}"
        m, worth = offered[option]
        slots = tuple(sorted(int(t) for t in listed.split(",") if t))
        assert len(set(slots)) == ref.leases == len(slots), f"{job['id']}: {slots}"
        if ref.leases == 0:
            assert m >= 1, f"{job['id']} ends in its hold after the deadline it was given"
        else:
            assert all(ref.first <= t < m for t in slots), f"{job['id']}: {slots} not before {m}"
        assert room.take(ref.size, slots), f"{job['id']}: no room in {slots}"
        kept += ref.guaranteed
        total += worth
    return Best(kept, total)
