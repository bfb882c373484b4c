"""An independent reference for the elastic family, written from FORMULATIONS §9 alone (plain
Python over the snapshot's JSON; nothing of the package is imported): every integer choice (one
configuration or none per job) enumerated for `sia`, `elastic_max_goodput` and `ones`, and the
time-share LP of `elastic_max_min` by scipy over one column per (job, configuration).

The definitions it applies (§9b, §9d–g):
- a configuration is usable when its goodput (else its throughput) is positive and its GPUs fit
  both the type's count and the job's `max_gpus`; a job with none is no decision (it waits, at
  no price);
- a pinned job runs in the usable configuration that matches its `current` (GPU type, GPUs,
  nodes when given) with the most goodput — the first listed among equals — and nothing else;
  its Ĝ is 1 (its one configuration is its slowest);
- Ĝ_jc = G_jc / min of G over the job's usable configurations, times Sia's re-allocation factor
  r = max(T − n·S, 0)/(T + S) (1 while T < S, or without an age or a restart cost) where c does
  not match the job's `current`;
- Sia: Σ w Ĝ^p over running jobs + λ Σ w over waiting ones with a usable configuration, least
  for p < 0 (for p > 0: − λ …, most); max goodput: Σ w Ĝ over running jobs, most;
- ONES: the most GPUs in use, then the least Σ remaining / G × GPUs; a job with no work left
  (and not pinned) waits; no restart factor;
- max-min: maximize t with Σ_c Ĝ_jc X_jc ≥ w_j t, Σ_c X_jc ≤ 1, capacity less the pinned
  jobs' GPUs, pinned jobs outside; then, t held, the most Σ Ĝ X / w.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import linprog

Snapshot = dict[str, Any]
Choice = tuple[int | None, ...]  # per job: index into its configurations, or None (waits)


@dataclass(frozen=True)
class Job:
    """What the objectives read of one job: its options (configuration indices) and values."""

    weight: float
    options: tuple[int, ...]  # usable configurations (a pinned job: exactly its one, or none)
    pinned: bool
    goodput: dict[int, float]  # G of each option
    normalized: dict[int, float]  # Ĝ of each option (with the restart factor)
    plain: dict[int, float]  # Ĝ without the restart factor
    gpus: dict[int, int]
    gpu_type: dict[int, str]
    remaining: float | None


def _value(config: dict[str, Any]) -> float:
    given = config.get("goodput", config.get("throughput"))
    return float(given) if given is not None else 0.0


def _matches(current: dict[str, Any] | None, config: dict[str, Any]) -> bool:
    if current is None:
        return False
    return (
        current["gpu_type"] == config["gpu_type"]
        and current["gpus"] == config["gpus"]
        and current.get("nodes") in (None, config.get("nodes", 1))
    )


def _factor(spec: dict[str, Any]) -> float:
    age, cost = spec.get("age"), float(spec.get("restart_seconds", 0.0))
    if age is None or cost <= 0 or age < cost:
        return 1.0
    restarts = float(spec.get("restarts", 0))
    return max(float(age) - restarts * cost, 0.0) / (float(age) + cost)


def read_job(snapshot: Snapshot, job: dict[str, Any]) -> Job:
    counts = {t["name"]: t["count"] for t in snapshot["gpu_types"]}
    spec = job.get("elastic") or {}
    configs = spec.get("configurations") or []
    cap = spec.get("max_gpus") or math.inf
    usable = [
        i
        for i, c in enumerate(configs)
        if _value(c) > 0 and c["gpus"] <= counts[c["gpu_type"]] and c["gpus"] <= cap
    ]
    current = spec.get("current")
    pinned = bool(spec.get("pinned"))
    if pinned:
        matching = [i for i in usable if _matches(current, configs[i])]
        best = max((_value(configs[i]) for i in matching), default=None)
        usable = [next(i for i in matching if _value(configs[i]) == best)] if matching else []
    least = min((_value(configs[i]) for i in usable), default=1.0)
    factor = _factor(spec)
    plain = {i: _value(configs[i]) / least for i in usable}
    normalized = {
        i: plain[i] * (1.0 if current is None or _matches(current, configs[i]) else factor)
        for i in usable
    }
    return Job(
        weight=float(job.get("weight", 1.0)),
        options=tuple(usable),
        pinned=pinned,
        goodput={i: _value(configs[i]) for i in usable},
        normalized=normalized,
        plain=plain,
        gpus={i: configs[i]["gpus"] for i in usable},
        gpu_type={i: configs[i]["gpu_type"] for i in usable},
        remaining=spec.get("remaining"),
    )


def read(snapshot: Snapshot) -> list[Job]:
    return [read_job(snapshot, job) for job in snapshot["jobs"]]


def choices(snapshot: Snapshot, jobs: list[Job], ones: bool = False) -> Iterator[Choice]:
    """Every choice within the GPU counts: pinned jobs in theirs, others in one option or
    none (with `ones`, a job with no work left waits)."""
    counts = {t["name"]: t["count"] for t in snapshot["gpu_types"]}
    per_job: list[list[int | None]] = []
    for job in jobs:
        if job.pinned and job.options:
            per_job.append([job.options[0]])
        elif ones and (job.remaining or 0.0) <= 0:
            per_job.append([None])
        else:
            per_job.append([None, *job.options])
    for choice in itertools.product(*per_job):
        used = dict.fromkeys(counts, 0)
        for job, c in zip(jobs, choice, strict=True):
            if c is not None:
                used[job.gpu_type[c]] += job.gpus[c]
        if all(used[k] <= counts[k] for k in counts):
            yield choice


def gain(job: Job, c: int, restart: bool) -> float:
    """Ĝ_jc, with the restart factor or (`restart` false) without."""
    return (job.normalized if restart else job.plain)[c]


def sia(jobs: list[Job], choice: Choice, p: float, lam: float, restart: bool = True) -> float:
    """Sia's objective: Σ w Ĝ^p (running) ± λ Σ w (waiting with an option)."""
    sign = 1.0 if p < 0 else -1.0
    total = 0.0
    for job, c in zip(jobs, choice, strict=True):
        if c is not None:
            total += job.weight * gain(job, c, restart) ** p
        elif job.options:
            total += sign * lam * job.weight
    return total


def goodput(jobs: list[Job], choice: Choice, restart: bool = True) -> float:
    """Σ w Ĝ over the running jobs."""
    pairs = zip(jobs, choice, strict=True)
    return sum(job.weight * gain(job, c, restart) for job, c in pairs if c is not None)


def ones(jobs: list[Job], choice: Choice) -> tuple[int, float]:
    """(GPUs in use, Σ remaining / G × GPUs): the most of the first, then the least."""
    gpus, cost = 0, 0.0
    for job, c in zip(jobs, choice, strict=True):
        if c is not None:
            gpus += job.gpus[c]
            cost += (job.remaining or 0.0) / job.goodput[c] * job.gpus[c]
    return gpus, cost


@dataclass(frozen=True)
class Shares:
    level: float
    total: float  # Σ_j Σ_c Ĝ X / w at the level


def max_min(snapshot: Snapshot, jobs: list[Job], restart: bool = True) -> Shares | None:
    """The max-min LP and its Pareto stage (None: no job in the LP)."""
    names = [t["name"] for t in snapshot["gpu_types"]]
    free = {t["name"]: float(t["count"]) for t in snapshot["gpu_types"]}
    for job in jobs:
        if job.pinned and job.options:
            c = job.options[0]
            free[job.gpu_type[c]] -= job.gpus[c]
    inside = [j for j, job in enumerate(jobs) if job.options and not job.pinned]
    if not inside:
        return None
    cols = [(j, c) for j in inside for c in jobs[j].options]
    n = len(cols) + 1  # … and t last
    value = [gain(jobs[j], c, restart) for j, c in cols]
    a_ub, b_ub = [], []
    for j in inside:
        level, time = np.zeros(n), np.zeros(n)
        for i, (jj, _) in enumerate(cols):
            if jj == j:
                level[i], time[i] = -value[i], 1.0
        level[-1] = jobs[j].weight
        a_ub += [level, time]
        b_ub += [0.0, 1.0]
    for name in names:
        row = np.zeros(n)
        for i, (j, c) in enumerate(cols):
            if jobs[j].gpu_type[c] == name:
                row[i] = jobs[j].gpus[c]
        a_ub.append(row)
        b_ub.append(free[name])
    first = np.zeros(n)
    first[-1] = -1.0
    lp = linprog(first, A_ub=np.array(a_ub), b_ub=b_ub, bounds=(0, None), method="highs")
    assert lp.status == 0, lp.message
    t = float(-lp.fun)
    second = np.array([-value[i] / jobs[j].weight for i, (j, _) in enumerate(cols)] + [0.0])
    bounds = [(0, None)] * (n - 1) + [(t * (1 - 1e-9), None)]
    pareto = linprog(second, A_ub=np.array(a_ub), b_ub=b_ub, bounds=bounds, method="highs")
    assert pareto.status == 0, pareto.message
    return Shares(t, float(-pareto.fun))
