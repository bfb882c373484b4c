"""Tiresias's data (NSDI'19 simulator, Apache-2.0): models' tensor sizes, past jobs' GPU-times
from a production YARN cluster, its cluster shapes, and the Philly sample its experiments here
replay.

- `tiresias_models.json`: the tensor sizes (MB) of nine TensorFlow benchmark models, from the
  simulator's `models.py`. A model's skew is its largest tensor's share of the model: the VGG
  family and AlexNet (0.61–0.77) are dominated by one tensor, the others (≤ 0.14) are not — the
  line Tiresias's PACKLIMIT draws between jobs that need consolidation and the rest (§3.3).
- `tiresias_yarn_gput1000.csv`, `tiresias_yarn_gput10000.csv`: GPU-seconds of past jobs, the
  distribution the simulator gives its 2D-Gittins index.
- The clusters `n32g4` (1 switch × 32 nodes × 4 GPUs = 128) and `n256g8` (8 × 32 × 8 = 2,048).
- `chronus_mix2_3days_128gpu.csv` (`PHILLY_SAMPLE`): the Chronus artifact's Philly MIX2 trace
  (MIT), its first three days, each row kept with probability 128/960 — the Philly cluster's
  960 GPUs thinned to a 128-GPU one at the same load per GPU (`thin_philly` rebuilds it).
"""

from __future__ import annotations

import csv
import gzip
import json
import random
from functools import cache
from pathlib import Path
from typing import Any

from apportion.refdata import SOURCE

MODELS = SOURCE / "tiresias_models.json"
YARN_SAMPLES = SOURCE / "tiresias_yarn_gput10000.csv"
YARN_SAMPLES_1000 = SOURCE / "tiresias_yarn_gput1000.csv"
PHILLY_SAMPLE = SOURCE / "chronus_mix2_3days_128gpu.csv"
#: (nodes, GPUs per node) of the simulator's cluster files.
N32G4 = (32, 4)
N256G8 = (256, 8)
#: The Chronus traces' model names that differ from the simulator's; a model it has no data for
#: (Chronus's mobilenet_v2) falls back to inception3, as the simulator's `get_model` does.
ALIASES = {"inception_v3": "inception3", "inception_v4": "inception4"}
FALLBACK = "inception3"


@cache
def _tensors() -> dict[str, tuple[float, ...]]:
    data: dict[str, Any] = json.loads(MODELS.read_text())
    return {name: tuple(sizes) for name, sizes in data["tensors_mb"].items()}


def model_names() -> tuple[str, ...]:
    return tuple(_tensors())


def tensor_sizes(model: str | None) -> tuple[float, ...] | None:
    """The model's tensor sizes in MB (None without a model name)."""
    if model is None:
        return None
    table = _tensors()
    name = ALIASES.get(model.lower(), model.lower())
    return table.get(name, table[FALLBACK])


def skew(model: str | None) -> float | None:
    """The largest tensor's share of the model."""
    sizes = tensor_sizes(model)
    return None if sizes is None else max(sizes) / sum(sizes)


@cache
def yarn_samples(path: Path = YARN_SAMPLES) -> tuple[float, ...]:
    """Past jobs' GPU-seconds (the file's `duration` column)."""
    with path.open(newline="") as handle:
        return tuple(float(row["duration"]) for row in csv.DictReader(handle))


def yarn_distribution(path: Path = YARN_SAMPLES) -> dict[str, list[float]]:
    """The samples as a snapshot's `service_distribution`."""
    return {"samples": list(yarn_samples(path))}


def thin_philly(
    source: Path, out: Path, days: float = 3.0, fraction: float = 128 / 960, seed: int = 0
) -> int:
    """Write the rows of a Chronus trace (`.csv.gz`) submitted in its first `days`, each kept
    with probability `fraction` (one draw per row, in file order, from `random.Random(seed)`);
    returns how many were kept."""
    rng = random.Random(seed)
    with gzip.open(source, "rt", newline="") as handle:
        reader = csv.DictReader(handle)
        fields = list(reader.fieldnames or [])
        kept = [
            row
            for row in reader
            if rng.random() < fraction and float(row["submit_time"]) < days * 1440
        ]
    with out.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        writer.writerows(kept)
    return len(kept)


#: Gang sizes of the Philly MIX2 trace (Chronus artifact): how many of its jobs ask for each.
PHILLY_GANGS = {1: 28243, 2: 219, 4: 1246, 8: 919, 16: 105, 32: 9}


def busy_cluster(
    seed: int = 0,
    shape: tuple[int, int] = N256G8,
    fill: float = 0.8,
    new_job: tuple[int, str] = (32, "vgg16"),
) -> dict[str, Any]:
    """A snapshot of a cluster `fill` busy with running jobs, and one job to place.

    Running jobs draw their GPUs from Philly's gang sizes and their model from Tiresias's nine,
    each on GPUs picked at random among the free ones (a scheduler that counts GPUs and does not
    consolidate, as Tiresias's simulator's `count` scheme), until `fill` of the GPUs are held:
    nodes carry the network traffic of spread jobs, and few are wholly free. The job to place
    has `new_job` = (GPUs, model)."""
    import numpy as np

    nodes, per = shape
    rng = np.random.default_rng(seed)
    sizes = np.array(list(PHILLY_GANGS))
    weights = np.array(list(PHILLY_GANGS.values()), dtype=float)
    names = model_names()
    free = np.full(nodes, per)
    jobs: list[dict[str, Any]] = []
    while free.sum() > (1 - fill) * nodes * per:
        gang = int(rng.choice(sizes, p=weights / weights.sum()))
        if gang > free.sum():
            continue
        picked = rng.choice(np.repeat(np.arange(nodes), free), size=gang, replace=False)
        where, count = np.unique(picked, return_counts=True)
        free[where] -= count
        model = names[int(rng.integers(len(names)))]
        jobs.append(
            {
                "id": f"running-{len(jobs)}",
                "scale_factor": gang,
                "throughput": {"gpu": 1.0},
                "placement": {f"n{n}": int(c) for n, c in zip(where, count, strict=True)},
                "tensor_sizes": list(tensor_sizes(model) or ()),
                "workload_class": model,
            }
        )
    gpus, model = new_job
    jobs.append(
        {
            "id": "new",
            "scale_factor": gpus,
            "throughput": {"gpu": 1.0},
            "tensor_sizes": list(tensor_sizes(model) or ()),
            "workload_class": model,
        }
    )
    return {"nodes": [{"id": f"n{i}", "gpus": per} for i in range(nodes)], "jobs": jobs}
