"""Space-sharing snapshots from Gavel's table: every pair of a job list, with the table's
co-located throughputs (per member, whole-job steps/s) for the pair's two job types."""

from __future__ import annotations

from typing import Any

import numpy as np

from apportion.refdata.gavel import GavelTable, JobType
from apportion.refdata.synthetic import load_gavel_table

PairThroughput = dict[str, list[float]]


def gavel_pairs(
    jobs: list[dict[str, Any]], table: GavelTable | None = None
) -> list[dict[str, Any]]:
    """`job_pairs` entries for all pairs of `jobs` whose job types (workload_class, scale_factor)
    the table measured together; GPU types where neither member progresses are left out."""
    table = table or load_gavel_table()
    lookup: dict[tuple[JobType, JobType], PairThroughput] = {}
    for (a, b), per_type in table.pairs.items():
        kept = {g: [ta, tb] for g, (ta, tb) in per_type.items() if ta > 0 or tb > 0}
        if kept:
            lookup[(a, b)] = kept
            lookup[(b, a)] = {g: [tb, ta] for g, (ta, tb) in kept.items()}
    types = [(job.get("workload_class"), int(job.get("scale_factor", 1))) for job in jobs]
    out = []
    for i, first in enumerate(jobs):
        for j in range(i + 1, len(jobs)):
            # Shared dicts: many job pairs have the same two job types.
            found = lookup.get((types[i], types[j]))  # type: ignore[arg-type]
            if found is not None:
                out.append({"a": first["id"], "b": jobs[j]["id"], "throughput": found})
    return out


def gavel_sharing_snapshot(
    num_jobs: int,
    seed: int = 0,
    scale_factor: int = 1,
    gpus_per_type: int | None = None,
    table: GavelTable | None = None,
) -> dict[str, Any]:
    """Jobs drawn uniformly from the table's job types of one scale factor, N/4 GPUs of each
    type unless given, and every pair of jobs offered for space sharing."""
    table = table or load_gavel_table()
    rng = np.random.default_rng(seed)
    kinds = [jt for jt in table.job_types if jt[1] == scale_factor]
    jobs = []
    for i in range(num_jobs):
        model, sf = kinds[rng.integers(len(kinds))]
        jobs.append(
            {
                "id": f"job-{i}",
                "scale_factor": sf,
                "throughput": table.throughput((model, sf)),
                "workload_class": model,
            }
        )
    count = gpus_per_type if gpus_per_type is not None else max(1, num_jobs // 4)
    return {
        "gpu_types": [{"name": g, "count": count} for g in table.gpu_types],
        "jobs": jobs,
        "job_pairs": gavel_pairs(jobs, table),
    }


def with_entities(
    snapshot: dict[str, Any],
    weights: tuple[float, ...] = (1.0, 2.0, 3.0, 4.0, 5.0),
    policies: tuple[str, ...] = ("fairness",),
    seed: int = 0,
) -> dict[str, Any]:
    """A copy of `snapshot` whose jobs are spread at random over entities e0, e1, ... with the
    given weights; entity i uses `policies[i % len(policies)]` inside."""
    rng = np.random.default_rng(seed)
    owner = rng.integers(len(weights), size=len(snapshot["jobs"]))
    jobs = [{**job, "entity": f"e{owner[j]}"} for j, job in enumerate(snapshot["jobs"])]
    entities = [
        {"id": f"e{i}", "weight": w, "policy": policies[i % len(policies)]}
        for i, w in enumerate(weights)
    ]
    return {**snapshot, "jobs": jobs, "entities": entities}
