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


def contended_columns(
    num_jobs: int,
    num_types: int,
    seed: int = 0,
    contention: tuple[float, float] = (1.0, 2.0),
    noise: float = 0.25,
    table: GavelTable | None = None,
) -> dict[str, Any]:
    """A contended, heterogeneous cluster with its jobs as columns (as `random_columns`).

    - Scale factors from the 70/10/15/5 % mix over {1, 2, 4, 8} (`SCALE_MIX`); a job of scale
      factor s is one of Gavel's job types (model, s), drawn uniformly. Weights 1 or 2.
    - The `num_types` GPU types are placed along Gavel's three generations: type k sits at
      position g_k spread evenly over [0, 2.5] (0 = K80, 1 = P100, 2 = V100, beyond: newer by
      half of V100's step again); a job's throughput there is its Gavel throughput interpolated
      in logarithm between the generations around g_k (extrapolated past V100 with the job's
      own P100 → V100 step), so the speed-ups differ by job as in the table. A job type that
      cannot run on K80 cannot run on the types before P100.
    - Each throughput is then multiplied by its own lognormal noise exp(N(0, `noise`²)).
    - GPUs: the jobs' demand divided by a contention factor drawn uniformly in `contention`
      (1–2: as many GPUs as they ask for, down to half), split among the types by a
      Dirichlet(2, …) draw, each type at least 8 GPUs (the widest gang). The demand is what
      max-min fairness asks of the cluster: the GPUs the jobs would occupy, each on its own
      fastest type, to all reach the level t̄ = min_j c_j / w_j that only their own speed caps
      (FORMULATIONS §1d, c_j = s_j max_k T_jk / prop_j). With fewer GPUs the max-min level is
      set by the capacity rows (t* < t̄, the contended case, where the types' prices matter)
      and not by one slow job. (Σ_j s_j would not do: t̄ asks a job for a small fraction of
      its gang's time, and a cluster with Σ_j s_j / 2 GPUs is still idle at the level.)
    """
    table = table or load_gavel_table()
    rng = np.random.default_rng(seed)
    scales = rng.choice(SCALE_FACTORS, size=num_jobs, p=SCALE_MIX).astype(np.int64)
    of_scale = np.array([sf for _, sf in table.job_types])
    kinds = np.empty(num_jobs, dtype=np.int64)
    for sf in SCALE_FACTORS:
        at, among = scales == sf, np.flatnonzero(of_scale == sf)
        kinds[at] = among[rng.integers(among.size, size=int(at.sum()))]
    throughput = _generations(table, num_types)[kinds]
    throughput *= np.exp(rng.normal(0.0, noise, throughput.shape))
    weights = rng.choice([1.0, 2.0], size=num_jobs)
    split = rng.dirichlet(np.full(num_types, 2.0))
    total = _fair_demand(throughput, scales, weights, split) / rng.uniform(*contention)
    counts = np.maximum(8, np.round(total * split)).astype(np.int64)
    names = [f"gpu{k}" for k in range(num_types)]
    return {
        "gpu_types": [{"name": n, "count": int(c)} for n, c in zip(names, counts, strict=True)],
        "jobs": {
            "id": [f"job-{i}" for i in range(num_jobs)],
            "scale_factor": scales,
            "weight": weights,
            "throughput": {name: throughput[:, k].copy() for k, name in enumerate(names)},
        },
    }


def _generations(table: GavelTable, num_types: int) -> np.ndarray:
    """(job types, num_types): each Gavel job type's throughput at the types' positions along
    K80 (0), P100 (1), V100 (2), interpolated in logarithm."""
    iso = table.isolated[:, [table.gpu_types.index(g) for g in ("k80", "p100", "v100")]]
    position = np.linspace(0.0, 2.5, num_types)
    runs_old = iso[:, 0] > 0
    # Where K80 cannot run the job, P100's logarithm stands in for the interpolation.
    logs = np.log(np.where(iso > 0, iso, iso[:, 1:2]))
    lower = np.minimum(np.floor(position), 1).astype(np.int64)  # segment 0–1, or 1–2 and past
    frac = position - lower
    out: np.ndarray = np.exp(logs[:, lower] + frac * (logs[:, lower + 1] - logs[:, lower]))
    out[np.ix_(~runs_old, position < 1.0)] = 0.0
    return out


def _fair_demand(
    throughput: np.ndarray, scales: np.ndarray, weights: np.ndarray, split: np.ndarray
) -> float:
    """Σ_j w_j t̄ prop_j / max_k T_jk: the GPUs the jobs need to reach w_j t̄ each on its
    fastest type (a share s_j T X / prop_j costs s_j X GPUs), for types in the proportions
    `split`."""
    prop = throughput @ split
    best = throughput.max(axis=1)
    level = float((scales * best / (prop * weights)).min())
    return float((weights * level * prop / best).sum())


def busy_round(
    jobs: int = 10_000, nodes: int = 1_000, round_seconds: float = 360.0, seed: int = 0
) -> tuple[dict[str, Any], dict[str, dict[str, float]], dict[str, dict[str, float]]]:
    """A round mechanism's input at cluster scale: eight-GPU nodes of three types, jobs of 1–8
    GPUs each owed a random 30 % of its time across the types, and the seconds each has already
    received (whole rounds). Returns (snapshot, allocation, received)."""
    types = ("v100", "p100", "k80")
    rng = np.random.default_rng(seed)
    scale = rng.choice([1, 1, 1, 2, 4, 8], size=jobs)
    snapshot = {
        "nodes": [{"id": f"n{i}", "gpus": 8, "gpu_type": types[i % 3]} for i in range(nodes)],
        "jobs": [
            {"id": f"j{i}", "scale_factor": int(s), "throughput": dict.fromkeys(types, 1.0)}
            for i, s in enumerate(scale)
        ],
    }
    shares = rng.dirichlet(np.ones(3), size=jobs) * 0.3
    allocation = {
        f"j{i}": dict(zip(types, row.tolist(), strict=True)) for i, row in enumerate(shares)
    }
    received = {
        j: {k: float(rng.integers(0, 20)) * round_seconds for k in types} for j in allocation
    }
    return snapshot, allocation, received
