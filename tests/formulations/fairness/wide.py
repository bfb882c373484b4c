"""Small random snapshots whose throughputs or weights span many orders of magnitude (the
instances where solver tolerances decide), and checks that hold whatever the conditioning."""

from __future__ import annotations

from typing import Any

import numpy as np

TYPES = ("v100", "p100", "k80")


def wide_snapshot(
    seed: int,
    throughputs: tuple[float, float] | None = None,
    weights: tuple[float, float] | None = None,
    jobs: int = 10,
) -> dict[str, Any]:
    """`jobs` jobs on 0–4 GPUs of each of three types. Throughputs log-uniform over
    `throughputs` (uniform in [0.5, 5] if None), a fifth of them missing; weights log-uniform
    over `weights` (from {0.5, 1, 2, 3} if None); scale factors 1, 2 or 4; three in ten jobs
    repeat the one before (merged groups)."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 5, len(TYPES))
    counts[0] += counts.sum() == 0
    out: list[dict[str, Any]] = []
    for i in range(jobs):
        if out and rng.random() < 0.3:
            out.append({**out[-1], "id": f"j{i}"})
            continue
        if throughputs is None:
            speed = rng.uniform(0.5, 5, len(TYPES))
        else:
            speed = 10 ** rng.uniform(*np.log10(throughputs), len(TYPES))
        speed = np.round(speed * (rng.random(len(TYPES)) > 0.2), 6)
        speed[0] += 1.0 if not speed.any() else 0.0
        if weights is None:
            weight = float(rng.choice([0.5, 1, 2, 3]))
        else:
            weight = float(np.round(10 ** rng.uniform(*np.log10(weights)), 6))
        out.append(
            {
                "id": f"j{i}",
                "scale_factor": int(rng.choice([1, 1, 1, 2, 4])),
                "weight": weight,
                "throughput": {n: float(v) for n, v in zip(TYPES, speed, strict=True) if v > 0},
            }
        )
    return {
        "gpu_types": [{"name": n, "count": int(c)} for n, c in zip(TYPES, counts, strict=True)],
        "jobs": out,
    }


def not_leximin_below(ours: np.ndarray, other: np.ndarray, rtol: float = 1e-6) -> bool:
    """Whether the sorted vector `ours` is not lexicographically below `other` (both feasible
    shares): at the first place where they differ by more than `rtol` (relative to the larger),
    ours is the larger. A leximin-optimal vector passes against every feasible one; a vector
    with a job frozen while it could rise fails against the one where it rose."""
    a, b = np.sort(ours), np.sort(other)
    for x, y in zip(a.tolist(), b.tolist(), strict=True):
        if abs(x - y) > rtol * max(abs(x), abs(y), 1e-300):
            return x > y
    return True
