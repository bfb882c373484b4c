"""Brute force over every assignment of small elastic snapshots (each job waits or runs in one
of its configurations), written with the policies and sharing their blind spots: its snapshots
hold no pinned job, no duplicate configuration and no zero goodput, and it reads neither
`max_gpus` nor `nodes`. The independent reference, with those cases, is `reference`."""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterator
from typing import Any

Snapshot = dict[str, Any]
Choice = tuple[int | None, ...]  # per job: index into its configurations, or None


def random_snapshot(seed: int, jobs: int = 4, remaining: bool = False) -> Snapshot:
    rng = random.Random(seed)
    types = [{"name": "a", "count": rng.randint(1, 4)}, {"name": "b", "count": rng.randint(1, 3)}]
    out = []
    for j in range(jobs):
        configs = []
        for t in types:
            for g in (1, 2, 4):
                if rng.random() < 0.6:
                    rate = round(g ** rng.uniform(0.3, 1.0) * rng.uniform(0.5, 3.0), 3)
                    configs.append({"gpu_type": t["name"], "gpus": g, "goodput": rate})
        if not configs:
            configs.append({"gpu_type": "a", "gpus": 1, "goodput": 1.0})
        spec: dict[str, Any] = {"configurations": configs}
        if remaining:
            spec["remaining"] = round(rng.uniform(10, 100), 2)
        if j == 0 and rng.random() < 0.5:  # a running job with a restart discount
            now = rng.choice(configs)
            spec.update(
                current={"gpu_type": now["gpu_type"], "gpus": now["gpus"]},
                age=rng.uniform(50, 500),
                restarts=rng.randint(0, 3),
                restart_seconds=30.0,
            )
        out.append({"id": f"j{j}", "weight": rng.choice([1.0, 2.0]), "elastic": spec})
    return {"gpu_types": types, "jobs": out}


def assignments(snapshot: Snapshot) -> Iterator[Choice]:
    """Every assignment that fits the GPU counts."""
    counts = {t["name"]: t["count"] for t in snapshot["gpu_types"]}
    options = [[None, *range(len(j["elastic"]["configurations"]))] for j in snapshot["jobs"]]
    for choice in itertools.product(*options):
        used = dict.fromkeys(counts, 0)
        for job, c in zip(snapshot["jobs"], choice, strict=True):
            if c is not None:
                config = job["elastic"]["configurations"][c]
                used[config["gpu_type"]] += config["gpus"]
        if all(used[k] <= counts[k] for k in counts):
            yield choice


def normalized(job: dict[str, Any], c: int, restart: bool, counts: dict[str, int]) -> float:
    """Goodput over the job's least among configurations that fit their type, discounted by
    Sia's factor when c restarts it."""
    spec = job["elastic"]
    configs = spec["configurations"]
    least = min(x["goodput"] for x in configs if x["gpus"] <= counts[x["gpu_type"]])
    value = configs[c]["goodput"] / least
    now = spec.get("current")
    moves = now is not None and (
        now["gpu_type"] != configs[c]["gpu_type"] or now["gpus"] != configs[c]["gpus"]
    )
    if restart and moves:
        age, n, cost = spec["age"], spec["restarts"], spec["restart_seconds"]
        value *= 1.0 if age < cost else max(age - n * cost, 0.0) / (age + cost)
    return value


def _counts(snapshot: Snapshot) -> dict[str, int]:
    return {t["name"]: t["count"] for t in snapshot["gpu_types"]}


def sia_value(snapshot: Snapshot, choice: Choice, p: float = -0.5, lam: float = 1.1) -> float:
    total = 0.0
    counts = _counts(snapshot)
    for job, c in zip(snapshot["jobs"], choice, strict=True):
        w = job.get("weight", 1.0)
        fits = any(x["gpus"] <= counts[x["gpu_type"]] for x in job["elastic"]["configurations"])
        if c is not None:
            total += w * normalized(job, c, True, counts) ** p
        elif fits:  # a job that cannot run anywhere is no decision: it pays nothing
            total += w * lam
    return total


def total_goodput(snapshot: Snapshot, choice: Choice) -> float:
    counts = _counts(snapshot)
    return sum(
        job.get("weight", 1.0) * normalized(job, c, True, counts)
        for job, c in zip(snapshot["jobs"], choice, strict=True)
        if c is not None
    )


def ones_value(snapshot: Snapshot, choice: Choice) -> tuple[int, float]:
    """(GPUs used, Σ remaining / goodput × GPUs): the best has the most GPUs, then the least."""
    gpus, cost = 0, 0.0
    for job, c in zip(snapshot["jobs"], choice, strict=True):
        if c is not None:
            config = job["elastic"]["configurations"][c]
            gpus += config["gpus"]
            cost += job["elastic"]["remaining"] / config["goodput"] * config["gpus"]
    return gpus, cost


def best(values: list[float], minimize: bool) -> float:
    return min(values) if minimize else max(values)


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)
