"""Random small Tiresias snapshots for the admission tests (the oracle that scores them is the
independent reference, `reference`)."""

from __future__ import annotations

import random
from typing import Any


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
