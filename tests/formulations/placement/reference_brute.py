"""An independent reference for the contention placement (docs/FORMULATIONS.md §7 and DeepShare's
reward): every integer choice of a tiny snapshot enumerated (which jobs run, in which shape, on
which nodes; for running jobs also stay, stop or move), each scored from the written definitions.

Written from the math only, sharing nothing with the policy's code (nor with the older oracles
beside it): configurations α = (class, GPUs, nodes spanned); CS(α | β) from a full table, 1 for
a single-node job under the `multi_node` scope, capped by `max_cs`; co-runners are the other
jobs holding GPUs on a node the job uses.

- `linear`: W2·U − W1·Φ, U = GPUs held / C, Φ = mean over every job of the snapshot of c_j
  (a job that does not run counts 1), c_j = max(1, max CS) (worst) or 1 + Σ (CS − 1) (additive).
- `reference`: W2·U − W1·μ, μ = mean over the jobs that hold GPUs of 1 − 1/c_j (0 if none).
- `schedule`: (1/C)[W2 Σ_run π_j g_j − W1 Σ_run g_j ℓ_j − W2 Σ_running, not kept g_j τ/H], with
  ℓ_j = 1 − 1/c_j (worst co-runner) and π the priority levels: keys (SRTF: steps left over the
  fastest throughput, or the remaining time; LAS: attained service, none = 0) cut at their
  largest gaps (at least the tolerance) into at most L levels, a job without a key in a level of
  its own after every keyed one; π_lowest = 1, π_L = B·π_{L+1}, B = C·σmax/(g_min·σmin) + 1
  (σ ≡ 1 here: no spread throughputs).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

Config = tuple[str, int, int]
Placement = dict[str, int]  # node → GPUs
Schedule = dict[str, Placement]  # job id → where it runs (only the jobs that run)


@dataclass(frozen=True)
class Case:
    """A snapshot as the reference reads it, with the options that change the math."""

    nodes: dict[str, int]  # node → GPUs
    jobs: list[dict[str, Any]]  # snapshot job dicts (running ones have `placement`)
    shapes: dict[int, list[tuple[int, int]]]  # demand → (nodes, GPUs per node)
    table: dict[tuple[Config, Config], float]
    max_cs: float | None = None
    scope: str = "multi_node"

    @property
    def gpus(self) -> int:
        return sum(self.nodes.values())


def demand(job: dict[str, Any]) -> int:
    return int(job.get("scale_factor") or sum(job["placement"].values()))


def spreads(case: Case, job: dict[str, Any]) -> list[Placement]:
    """Every placement of the job in one of its shapes, on any nodes (capacity aside)."""
    out = []
    for k, p in case.shapes.get(demand(job), []):
        for chosen in itertools.combinations(sorted(case.nodes), k):
            if all(case.nodes[n] >= p for n in chosen):
                out.append(dict.fromkeys(chosen, p))
    return out


def ways(case: Case, job: dict[str, Any], moves: str) -> list[Placement | None]:
    """What the job may do: wait/stop (None), stay, or start/move somewhere."""
    if "placement" not in job:
        return [None, *spreads(case, job)]
    here = job["placement"]
    if moves == "none":
        return [here]
    if moves == "preempt":
        return [None, here]
    return [None, here, *(s for s in spreads(case, job) if s != here)]


def schedules(case: Case, moves: str) -> Iterator[Schedule]:
    """Every schedule that fits the nodes."""
    options = [ways(case, job, moves) for job in case.jobs]
    for combo in itertools.product(*options):
        load = dict.fromkeys(case.nodes, 0)
        for placed in combo:
            for n, g in (placed or {}).items():
                load[n] += g
        if all(load[n] <= case.nodes[n] for n in load):
            yield {job["id"]: p for job, p in zip(case.jobs, combo, strict=True) if p is not None}


def cs(case: Case, a: Config, b: Config) -> float:
    if case.scope == "multi_node" and (a[2] == 1 or b[2] == 1):
        return 1.0
    value = case.table[(a, b)]
    return min(value, case.max_cs) if case.max_cs is not None else value


def sensitivities(case: Case, schedule: Schedule, penalty: str = "worst") -> dict[str, float]:
    """c_j of every job that runs."""
    classes = {job["id"]: job["workload_class"] for job in case.jobs}
    config = {j: (classes[j], sum(p.values()), len(p)) for j, p in schedule.items()}
    out = {}
    for j, placed in schedule.items():
        values = [
            cs(case, config[j], config[b])
            for b, theirs in schedule.items()
            if b != j and set(theirs) & set(placed)
        ]
        if penalty == "additive":
            out[j] = 1.0 + sum(v - 1.0 for v in values)
        else:
            out[j] = max([1.0, *values])
    return out


def linear(case: Case, schedule: Schedule, w1: float, penalty: str) -> float:
    c = sensitivities(case, schedule, penalty)
    used = sum(sum(p.values()) for p in schedule.values())
    phi = (sum(c.values()) + len(case.jobs) - len(schedule)) / len(case.jobs)
    return (1 - w1) * used / case.gpus - w1 * phi


def reference(case: Case, schedule: Schedule, w1: float) -> float:
    c = sensitivities(case, schedule)
    used = sum(sum(p.values()) for p in schedule.values())
    mu = sum(1 - 1 / v for v in c.values()) / len(c) if c else 0.0
    return (1 - w1) * used / case.gpus - w1 * mu


def key(job: dict[str, Any], priority: str) -> float | None:
    if priority == "las":
        return float(job.get("attained_service") or 0.0)
    if job.get("remaining_time") is not None:
        return float(job["remaining_time"])
    fastest = max((job.get("throughput") or {}).values(), default=0.0)
    if job.get("steps_remaining") is None or fastest <= 0:
        return None
    return float(job["steps_remaining"]) / fastest


def levels(keys: dict[str, float | None], count: int, tolerance: float) -> dict[str, int]:
    """Each job's level (0 first): known keys cut at their largest gaps, unknown ones after."""
    known = sorted({k for k in keys.values() if k is not None})
    gaps = sorted(
        ((known[i + 1] - known[i], i) for i in range(len(known) - 1)),
        key=lambda gap: -gap[0],
    )
    unknown = any(k is None for k in keys.values())
    cuts_left = count - 1 - (1 if unknown and known and count > 1 else 0)
    eligible = [g for g in gaps if (g[0] >= tolerance if tolerance > 0 else g[0] > 0)]
    starts = sorted(known[i + 1] for _, i in eligible[: max(cuts_left, 0)])
    out = {}
    for j, k in keys.items():
        if k is None:
            out[j] = len(starts) + 1 if known and count > 1 else 0
        else:
            out[j] = sum(1 for s in starts if k >= s)
    return out


def weights(case: Case, level: dict[str, int]) -> dict[str, float]:
    """π per GPU: 1 at the lowest level, B times the level below it above."""
    smallest = min((demand(job) for job in case.jobs), default=1)
    base = case.gpus / smallest + 1.0
    lowest = max(level.values(), default=0)
    return {j: base ** (lowest - v) for j, v in level.items()}


def schedule_value(
    case: Case, schedule: Schedule, w1: float, restart: float, pi: dict[str, float]
) -> float:
    """The schedule objective of `schedule` (module docstring), priorities `pi`."""
    c = sensitivities(case, schedule)
    g = {job["id"]: demand(job) for job in case.jobs}
    value = sum(pi[j] * g[j] for j in schedule)
    lost = sum(g[j] * (1 - 1 / c[j]) for j in schedule)
    restarts = sum(
        g[job["id"]]
        for job in case.jobs
        if "placement" in job and schedule.get(job["id"]) != job["placement"]
    )
    return ((1 - w1) * value - w1 * lost - (1 - w1) * restarts * restart) / case.gpus


def best(values: Iterator[float]) -> float:
    top = -math.inf
    for v in values:
        top = max(top, v)
    return top
