"""An independent oracle for exact admission: enumerate every decision on a tiny snapshot (each
running job kept or stopped, each waiting job left waiting or placed any way its rule allows)
and score it from the definition (FORMULATIONS §10b), sharing no code with the policy."""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterator
from typing import Any

Vector = tuple[float, ...]


def placements(sizes: list[int], gang: int, most_nodes: int) -> Iterator[tuple[int, ...]]:
    """Every way to put `gang` GPUs on nodes of these sizes, on at most `most_nodes` nodes."""
    for split in itertools.product(*(range(min(s, gang) + 1) for s in sizes)):
        if sum(split) == gang and sum(1 for x in split if x) <= most_nodes:
            yield split


def fewest(sizes: list[int], gang: int) -> int:
    total = 0
    for count, size in enumerate(sorted(sizes, reverse=True), start=1):
        total += size
        if total >= gang:
            return count
    return 0


def ranks(jobs: list[dict[str, Any]], queue: list[int]) -> list[int]:
    def key(i: int) -> tuple[float, float, int]:
        started = jobs[i].get("started_at")
        return (math.inf if started is None else started, jobs[i].get("arrival_time", math.inf), i)

    out = [0] * len(jobs)
    for q in set(queue):
        members = sorted((i for i in range(len(jobs)) if queue[i] == q), key=key)
        for position, i in enumerate(members):
            out[i] = position
    return out


def score(
    jobs: list[dict[str, Any]],
    runs: list[bool],
    queue: list[int],
    rank: list[int],
    cost: float,
    queues: int,
) -> Vector:
    counts = [sum(1 for i in range(len(jobs)) if runs[i] and queue[i] == q) for q in range(queues)]
    lost = sum(
        math.ceil(cost * jobs[i]["scale_factor"])
        for i in range(len(jobs))
        if "placement" in jobs[i] and not runs[i]
    )
    size = [sum(1 for x in queue if x == q) for q in range(queues)]
    priority = sum(size[queue[i]] - rank[i] for i in range(len(jobs)) if runs[i])
    return (*counts, -lost, priority)


def best(
    snapshot: dict[str, Any], limits: list[float], cost: float, cap: int | None, sensitive: set[str]
) -> Vector:
    nodes = [n["id"] for n in snapshot["nodes"]]
    sizes = [n["gpus"] for n in snapshot["nodes"]]
    jobs = snapshot["jobs"]
    queue = [sum(1 for x in limits if j.get("attained_service", 0.0) >= x) for j in jobs]
    rank = ranks(jobs, queue)
    choices: list[list[tuple[int, ...] | None]] = []
    for job in jobs:
        g = job["scale_factor"]
        if "placement" in job:
            choices.append([None, tuple(job["placement"].get(n, 0) for n in nodes)])
        else:
            most = fewest(sizes, g) if job["id"] in sensitive and g > 1 else len(nodes)
            choices.append([None, *placements(sizes, g, most)])
    top: Vector | None = None
    for pick in itertools.product(*choices):
        used = [sum(p[n] for p in pick if p is not None) for n in range(len(nodes))]
        if any(u > s for u, s in zip(used, sizes, strict=True)):
            continue
        stopped = sum(1 for job, p in zip(jobs, pick, strict=True) if "placement" in job and not p)
        if cap is not None and stopped > cap:
            continue
        value = score(jobs, [p is not None for p in pick], queue, rank, cost, len(limits) + 1)
        top = value if top is None or value > top else top
    assert top is not None
    return top


def random_snapshot(seed: int) -> tuple[dict[str, Any], set[str]]:
    """2–3 nodes of 2–4 GPUs, 4–5 jobs of 1–4 GPUs, some running, some skewed."""
    rng = random.Random(seed)
    sizes = [rng.choice([2, 3, 4]) for _ in range(rng.randint(2, 3))]
    nodes = [{"id": f"n{i}", "gpus": s} for i, s in enumerate(sizes)]
    free = list(sizes)
    jobs: list[dict[str, Any]] = []
    sensitive = set()
    for i in range(rng.randint(4, 5)):
        g = rng.choice([1, 1, 2, 2, 3, 4])
        job: dict[str, Any] = {
            "id": f"j{i}",
            "scale_factor": g,
            "throughput": {"gpu": 1.0},
            "arrival_time": float(i),
            "attained_service": rng.choice([0.0, 50.0, 150.0, 400.0]),
        }
        if rng.random() < 0.4:
            job["tensor_sizes"] = [10.0, 1.0]  # skew 10/11: consolidated
            sensitive.add(job["id"])
        where = [n for n in range(len(sizes)) if free[n] >= g]
        if where and rng.random() < 0.5:
            n = rng.choice(where)
            free[n] -= g
            job["placement"] = {f"n{n}": g}
            job["started_at"] = float(rng.randint(0, 5))
        jobs.append(job)
    return {"nodes": nodes, "now": 10.0, "jobs": jobs}, sensitive
