"""Snapshot generators for tests and benchmarks: Gavel-table job mixes and random clusters."""

from __future__ import annotations

from typing import Any

import numpy as np

from apportion.refdata import SOURCE
from apportion.refdata.gavel import GavelTable

GAVEL_TABLE = SOURCE / "gavel_throughputs.json"

# The mix used by the Gavel evaluation and our benchmarks: P(scale factor) = 70/10/15/5 %.
SCALE_FACTORS = (1, 2, 4, 8)
SCALE_MIX = (0.70, 0.10, 0.15, 0.05)


def load_gavel_table() -> GavelTable:
    import json

    return GavelTable.from_compact(json.loads(GAVEL_TABLE.read_text()))


def gavel_snapshot(
    num_jobs: int, seed: int = 0, table: GavelTable | None = None, gpus_per_type: int | None = None
) -> dict[str, Any]:
    """Jobs drawn from Gavel's job types with scale factors 70/10/15/5 % over {1,2,4,8};
    N/4 GPUs of each type unless `gpus_per_type` is given."""
    table = table or load_gavel_table()
    rng = np.random.default_rng(seed)
    by_scale = {sf: [jt for jt in table.job_types if jt[1] == sf] for sf in SCALE_FACTORS}
    scales = rng.choice(SCALE_FACTORS, size=num_jobs, p=SCALE_MIX)
    count = gpus_per_type if gpus_per_type is not None else max(1, num_jobs // 4)
    jobs = []
    for i, sf in enumerate(scales):
        model, _ = by_scale[int(sf)][rng.integers(len(by_scale[int(sf)]))]
        jobs.append(
            {
                "id": f"job-{i}",
                "scale_factor": int(sf),
                "throughput": table.throughput((model, int(sf))),
                "workload_class": model,
            }
        )
    return {
        "gpu_types": [{"name": g, "count": count} for g in table.gpu_types],
        "jobs": jobs,
    }


def random_snapshot(
    num_jobs: int, num_types: int, seed: int = 0, gpus_per_type: int | None = None
) -> dict[str, Any]:
    """Every job distinct: throughputs uniform in [0.5, 5] with 10 % of entries missing,
    weights in {1, 2}, scale factors from the 70/10/15/5 % mix. The worst case for merging."""
    gpu_types, names, throughput, scales, weights = _random_draws(
        num_jobs, num_types, seed, gpus_per_type
    )
    jobs = [
        {
            "id": f"job-{i}",
            "scale_factor": int(scales[i]),
            "weight": float(weights[i]),
            "throughput": {names[k]: float(v) for k, v in enumerate(row) if v > 0},
        }
        for i, row in enumerate(throughput)
    ]
    return {"gpu_types": gpu_types, "jobs": jobs}


def random_columns(
    num_jobs: int, num_types: int, seed: int = 0, gpus_per_type: int | None = None
) -> dict[str, Any]:
    """`random_snapshot`'s snapshot, the same numbers, with its jobs as columns: numpy arrays
    (ids a list), as the library takes them; `orjson.dumps(..., option=OPT_SERIALIZE_NUMPY)`
    writes the JSON. A missing throughput is a 0 here (the job cannot run there either way)."""
    gpu_types, names, throughput, scales, weights = _random_draws(
        num_jobs, num_types, seed, gpus_per_type
    )
    jobs = {
        "id": [f"job-{i}" for i in range(num_jobs)],
        "scale_factor": scales.astype(np.int64),
        "weight": weights,
        "throughput": {name: throughput[:, k].copy() for k, name in enumerate(names)},
    }
    return {"gpu_types": gpu_types, "jobs": jobs}


def _random_draws(
    num_jobs: int, num_types: int, seed: int, gpus_per_type: int | None
) -> tuple[list[dict[str, Any]], list[str], np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    names = [f"gpu{k}" for k in range(num_types)]
    throughput = rng.uniform(0.5, 5.0, (num_jobs, num_types))
    throughput *= rng.random((num_jobs, num_types)) > 0.1
    throughput[throughput.sum(axis=1) == 0, 0] = 1.0
    scales = rng.choice(SCALE_FACTORS, size=num_jobs, p=SCALE_MIX)
    weights = rng.choice([1.0, 2.0], size=num_jobs)
    count = gpus_per_type if gpus_per_type is not None else max(8, num_jobs // 4)
    gpu_types = [{"name": n, "count": count} for n in names]
    return gpu_types, names, throughput, scales, weights
