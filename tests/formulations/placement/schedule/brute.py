"""An independent oracle for the schedule objective: enumerate every schedule of a tiny snapshot
(each job not running, where it runs, or in any allowed shape on any nodes), and score it from
the definition (FORMULATIONS §7, "schedule"), sharing no code with the policy."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from typing import Any

Config = tuple[str, int, int]
Placed = dict[str, dict[str, int]]  # job id → node → GPUs
SHAPES = {1: [(1, 1)], 2: [(1, 2), (2, 1)], 4: [(1, 4), (2, 2), (4, 1)]}
STAY_BONUS = 1e-4  # the policy's tie-break, part of its restart cost


def schedules(snapshot: dict[str, Any], moves: str = "migrate") -> Iterator[Placed]:
    """Every feasible schedule: running jobs stay, or also stop (`moves` preempt), or also
    move (migrate); waiting ones start or wait."""
    size = {n["id"]: n["gpus"] for n in snapshot["nodes"]}
    jobs = snapshot["jobs"]
    ways = []
    for job in jobs:
        running = "placement" in job
        options: list[dict[str, int] | None] = [] if running and moves == "none" else [None]
        if running:
            options.append(job["placement"])
        demand = job.get("scale_factor") or sum(job["placement"].values())
        for k, p in SHAPES[demand] if not running or moves == "migrate" else []:
            for nodes in itertools.combinations(sorted(size), k):
                spread = dict.fromkeys(nodes, p)
                if spread != job.get("placement"):
                    options.append(spread)
        ways.append(options)
    for combo in itertools.product(*ways):
        load = dict.fromkeys(size, 0)
        for spread in combo:
            for n, g in (spread or {}).items():
                load[n] += g
        if all(load[n] <= size[n] for n in size):
            yield {job["id"]: s for job, s in zip(jobs, combo, strict=True) if s is not None}


def losses(
    snapshot: dict[str, Any], table: dict[tuple[Config, Config], float], placed: Placed
) -> dict[str, float]:
    """1 − 1/CS of each placed job's worst co-runner (0 with none)."""
    jobs = {job["id"]: job for job in snapshot["jobs"]}
    config = {
        j: (jobs[j]["workload_class"], sum(nodes.values()), len(nodes))
        for j, nodes in placed.items()
    }
    out = {}
    for j, nodes in placed.items():
        others = [b for b, theirs in placed.items() if b != j and set(theirs) & set(nodes)]
        worst = max([1.0] + [table.get((config[j], config[b]), 1.0) for b in others])
        out[j] = 1.0 - 1.0 / worst
    return out


def score(
    snapshot: dict[str, Any],
    table: dict[tuple[Config, Config], float],
    placed: Placed,
    w1: float,
    restart: float,
    progress: bool = False,
) -> float:
    """(1/C)[W2 Σ g − W1 Σ g ℓ − W2 Σ_{running jobs moved or stopped} g (restart + ε)], every job
    at priority weight 1 and speed 1; with `progress` a job's loss also costs W2 g ℓ, its
    value being W2 g (1 − ℓ), the progress it makes."""
    jobs = {job["id"]: job for job in snapshot["jobs"]}
    lost = losses(snapshot, table, placed)
    total = sum(n["gpus"] for n in snapshot["nodes"])
    value = sum(sum(nodes.values()) for nodes in placed.values())
    price = w1 + (1 - w1) * progress
    contention = sum(sum(nodes.values()) * lost[j] * price for j, nodes in placed.items())
    restarts = sum(
        sum(job["placement"].values())
        for j, job in jobs.items()
        if "placement" in job and placed.get(j) != job["placement"]
    )
    return ((1 - w1) * value - contention - (1 - w1) * restarts * (restart + STAY_BONUS)) / total


def lexicographic_best(snapshot: dict[str, Any], key: dict[str, float]) -> set[str]:
    """The set of running jobs SRTF (LAS) picks: the lexicographically largest feasible set,
    its jobs compared in order of their key (smaller first)."""
    order = sorted(key, key=lambda j: key[j])
    best: tuple[int, ...] | None = None
    chosen: set[str] = set()
    for placed in schedules(snapshot):
        mark = tuple(int(j in placed) for j in order)
        if best is None or mark > best:
            best, chosen = mark, set(placed)
    return chosen


def random_snapshot(rng: random.Random, classes: str = "ABC") -> dict[str, Any]:
    """≤ 3 nodes × ≤ 4 GPUs, ≤ 2 running jobs, ≤ 3 waiting ones, distinct work left."""
    nodes = [{"id": f"n{i}", "gpus": rng.choice([2, 4])} for i in range(rng.randint(2, 3))]
    free = {n["id"]: n["gpus"] for n in nodes}
    jobs: list[dict[str, Any]] = []
    left = rng.sample(range(1, 50), 6)
    for r in range(rng.randint(0, 2)):
        demand = rng.choice([1, 2, 2, 4])
        fitting = [(k, p) for k, p in SHAPES[demand] if sum(f >= p for f in free.values()) >= k]
        if not fitting:
            continue
        k, p = rng.choice(fitting)
        chosen = rng.sample([n for n, f in free.items() if f >= p], k)
        for n in chosen:
            free[n] -= p
        jobs.append(
            {
                "id": f"r{r}",
                "workload_class": rng.choice(classes),
                "placement": dict.fromkeys(chosen, p),
                "steps_remaining": float(left.pop()),
                "attained_service": float(rng.randint(1, 100)),
            }
        )
    for c in range(rng.randint(1, 3)):
        jobs.append(
            {
                "id": f"c{c}",
                "workload_class": rng.choice(classes),
                "scale_factor": rng.choice([1, 2, 2, 4]),
                "steps_remaining": float(left.pop()),
                "attained_service": 0.0 if c == 0 else float(rng.randint(101, 200)),
            }
        )
    for job in jobs:
        job["throughput"] = {"gpu": 1.0}
    return {
        "gpu_types": [{"name": "gpu", "count": sum(n["gpus"] for n in nodes)}],
        "nodes": nodes,
        "jobs": jobs,
    }


def random_table(
    rng: random.Random, snapshot: dict[str, Any]
) -> dict[tuple[Config, Config], float]:
    """A CS for every pair of configurations the snapshot's jobs can take."""
    configs = set()
    for job in snapshot["jobs"]:
        demand = job.get("scale_factor") or sum(job["placement"].values())
        for k, _ in SHAPES[demand]:
            configs.add((job["workload_class"], demand, k))
    ordered = sorted(configs)
    return {(a, b): round(rng.uniform(1.0, 3.0), 3) for a in ordered for b in ordered}
