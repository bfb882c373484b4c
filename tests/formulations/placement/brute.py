"""An independent oracle for placement: enumerate every placement of a tiny snapshot and score
it from the definition (FORMULATIONS §7), sharing no code with the policy."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from typing import Any

from apportion.solver import SolveResult

Config = tuple[str, int, int]


def cs(table: dict[tuple[Config, Config], float], scope: str, a: Config, b: Config) -> float:
    if scope == "multi_node" and (a[2] == 1 or b[2] == 1):
        return 1.0
    return table.get((a, b), 1.0)


def score(
    snapshot: dict[str, Any],
    table: dict[tuple[Config, Config], float],
    placed: dict[str, dict[str, int]],
    w1: float,
    penalty: str,
    scope: str,
    objective: str = "linear",
) -> float:
    """W2·U − W1·Φ for jobs `placed` ({job id: {node: GPUs}}, running ones included), or with
    `objective="reference"` W2·U − W1·mean over `placed` of 1 − 1/CS (0 if none)."""
    jobs = {job["id"]: job for job in snapshot["jobs"]}
    config = {
        j: (jobs[j]["workload_class"], sum(nodes.values()), len(nodes))
        for j, nodes in placed.items()
    }
    per_job = []
    for j, nodes in placed.items():
        others = [b for b, their in placed.items() if b != j and set(their) & set(nodes)]
        values = [cs(table, scope, config[j], config[b]) for b in others]
        if penalty == "worst":
            per_job.append(max([1.0, *values]))
        else:
            per_job.append(1.0 + sum(v - 1.0 for v in values))
    m = len(snapshot["jobs"])
    if objective == "reference":
        penalty_value = sum(1.0 - 1.0 / c for c in per_job) / len(per_job) if per_job else 0.0
    else:
        penalty_value = (sum(per_job) + (m - len(placed))) / m
    gpus = sum(node["gpus"] for node in snapshot["nodes"])
    used = sum(sum(nodes.values()) for nodes in placed.values())
    return (1 - w1) * used / gpus - w1 * penalty_value


def choices(
    job: dict[str, Any], nodes: list[dict[str, Any]], shapes: dict[int, list[tuple[int, int]]]
) -> list[dict[str, int] | None]:
    """Every way to place a waiting job with its allowed shapes (ignoring other jobs)."""
    out: list[dict[str, int] | None] = [None]
    allowed = shapes[job["scale_factor"]]
    if job.get("consolidate"):
        possible = [(k, p) for k, p in allowed if sum(n["gpus"] >= p for n in nodes) >= k]
        fewest = min((k for k, _ in possible), default=0)
        allowed = [(k, p) for k, p in possible if k == fewest]
    for k, p in allowed:
        for chosen in itertools.combinations([n["id"] for n in nodes], k):
            out.append(dict.fromkeys(chosen, p))
    return out


def brute_force(
    snapshot: dict[str, Any],
    table: dict[tuple[Config, Config], float],
    shapes: dict[int, list[tuple[int, int]]],
    w1: float,
    penalty: str = "worst",
    scope: str = "multi_node",
    objective: str = "linear",
) -> float:
    """The best score over every placement of the waiting jobs."""
    return max(
        score for score, _ in placements(snapshot, table, shapes, w1, penalty, scope, objective)
    )


def placements(
    snapshot: dict[str, Any],
    table: dict[tuple[Config, Config], float],
    shapes: dict[int, list[tuple[int, int]]],
    w1: float,
    penalty: str = "worst",
    scope: str = "multi_node",
    objective: str = "linear",
) -> Iterator[tuple[float, dict[str, dict[str, int]]]]:
    """Every feasible placement ({job id: {node: GPUs}}, running jobs included) with its score."""
    size = {n["id"]: n["gpus"] for n in snapshot["nodes"]}
    running = {j["id"]: j["placement"] for j in snapshot["jobs"] if "placement" in j}
    waiting = [j for j in snapshot["jobs"] if "placement" not in j]
    options = [choices(j, snapshot["nodes"], shapes) for j in waiting]
    for combo in itertools.product(*options):
        placed = dict(running)
        load = dict.fromkeys(size, 0)
        for nodes in running.values():
            for n, g in nodes.items():
                load[n] += g
        for job, nodes in zip(waiting, combo, strict=True):
            if nodes is not None:
                placed[job["id"]] = nodes
                for n, g in nodes.items():
                    load[n] += g
        if any(load[n] > size[n] for n in size):
            continue
        yield score(snapshot, table, placed, w1, penalty, scope, objective), placed


def assert_valid_placement(
    result: SolveResult, snapshot: dict[str, Any], shapes: dict[int, list[tuple[int, int]]]
) -> dict[str, dict[str, int]]:
    """Running jobs unmoved, started jobs in an allowed shape, no node over its GPUs."""
    size = {n["id"]: n["gpus"] for n in snapshot["nodes"]}
    load = dict.fromkeys(size, 0)
    placed = {}
    for job, spec in zip(result.jobs, snapshot["jobs"], strict=True):
        assert job.id == spec["id"]
        if "placement" in spec:
            assert job.placement == spec["placement"], f"running job {job.id} moved"
        if job.placement is None:
            continue
        placed[job.id] = job.placement
        per_node = set(job.placement.values())
        if "placement" not in spec:
            assert len(per_node) == 1, f"{job.id} split unevenly"
            shape = (len(job.placement), per_node.pop())
            assert shape in shapes[spec["scale_factor"]], f"{job.id} in shape {shape}"
        for n, g in job.placement.items():
            load[n] += g
    assert all(load[n] <= size[n] for n in size), "a node holds more GPUs than it has"
    return placed


def random_instance(
    rng: random.Random, classes: str = "ABC"
) -> tuple[dict[str, Any], dict[tuple[Config, Config], float]]:
    """≤ 3 nodes × ≤ 4 GPUs, ≤ 2 running jobs, ≤ 4 candidates, a full random CS table."""
    nodes = [{"id": f"n{i}", "gpus": rng.choice([2, 4, 4])} for i in range(rng.randint(2, 3))]
    free = {n["id"]: n["gpus"] for n in nodes}
    jobs: list[dict[str, Any]] = []
    for r in range(rng.randint(0, 2)):
        k = rng.randint(1, len(nodes))
        chosen = [n for n in rng.sample(list(free), k) if free[n] >= 1]
        if not chosen:
            continue
        placement = {n: rng.randint(1, min(2, free[n])) for n in chosen}
        for n, g in placement.items():
            free[n] -= g
        jobs.append({"id": f"r{r}", "workload_class": rng.choice(classes), "placement": placement})
    for c in range(rng.randint(1, 4)):
        job = {
            "id": f"c{c}",
            "workload_class": rng.choice(classes),
            "scale_factor": rng.choice([1, 2, 2, 4]),
        }
        if rng.random() < 0.15:
            job["consolidate"] = True
        jobs.append(job)
    # Every configuration that can occur, every pair measured: the oracle needs no fallbacks.
    configs = {
        (j["workload_class"], sum(j["placement"].values()), len(j["placement"]))
        for j in jobs
        if "placement" in j
    }
    configs |= {
        (j["workload_class"], j["scale_factor"], k)
        for j in jobs
        if "placement" not in j
        for k in range(1, j["scale_factor"] + 1)
    }
    # Sorted: a set's order follows string hashing, which changes from one process to the next.
    ordered = sorted(configs)
    table = {(a, b): round(rng.uniform(1.0, 3.0), 3) for a in ordered for b in ordered}
    return {"nodes": nodes, "jobs": jobs}, table


def contention_json(table: dict[tuple[Config, Config], float]) -> dict[str, Any]:
    def cfg(c: Config) -> dict[str, Any]:
        return {"workload_class": c[0], "gpus": c[1], "nodes": c[2]}

    return {
        "entries": [{"target": cfg(a), "co_runner": cfg(b), "cs": v} for (a, b), v in table.items()]
    }
