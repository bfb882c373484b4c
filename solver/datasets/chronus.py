"""Deadline snapshots: a Philly-like generator and the Chronus artifact's trace (MIX2 head).

The trace fixture (`chronus_mix2_head200.json`) holds the first 200 jobs of the Chronus
artifact's Philly MIX2 trace (MIT, S-Lab System Group): GPU demand, submit time and true duration
in minutes, deadlines relative to submission in minutes, their values, and the class.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
MIX2_HEAD = FIXTURES / "chronus_mix2_head200.json"

#: Soft deadlines in the trace sit at growing multiples of the first one, worth 10/8/5/2.
SOFT_STRETCH = (1.0, 1.2, 1.45, 1.8)
SOFT_VALUES = (10.0, 8.0, 5.0, 2.0)
STRICT_VALUE = 10.0
# A heavier GPU mix than Philly's (92 % single-GPU) so that 120 nodes are contended.
SIZES = (1, 2, 4, 8, 16, 32)
SIZE_MIX = (0.20, 0.10, 0.15, 0.30, 0.15, 0.10)


def load_mix2_head() -> list[dict[str, Any]]:
    return list(json.loads(MIX2_HEAD.read_text())["jobs"])


def philly_like_snapshot(
    nodes: int = 120,
    slo_jobs: int = 400,
    best_effort_jobs: int = 1_000,
    max_slots: int = 72,
    guaranteed_share: float = 0.6,
    gpus_per_node: int = 8,
    lease: float = 1200.0,
    seed: int = 0,
) -> dict[str, Any]:
    """SLO jobs (2/3 soft, 1/3 strict, as in MIX2) with deadlines up to `max_slots` leases ahead,
    a share of them already guaranteed (a set that provably fits), plus best-effort jobs."""
    rng = np.random.default_rng(seed)
    capacity = nodes * gpus_per_node
    size = rng.choice(SIZES, size=slo_jobs, p=SIZE_MIX)
    need = np.clip(np.round(rng.lognormal(np.log(14), 0.7, slo_jobs)), 1, max_slots // 2).astype(
        int
    )
    first = np.minimum(np.ceil(need * rng.uniform(1.1, 2.5, slo_jobs)), max_slots).astype(int)
    soft = rng.random(slo_jobs) < 2 / 3
    free = np.full(max_slots, capacity)
    jobs = []
    for j in range(slo_jobs):
        stretch = SOFT_STRETCH if soft[j] else (1.0,)
        slots = sorted({min(max_slots, int(np.ceil(first[j] * f))) for f in stretch})
        values = SOFT_VALUES[: len(slots)] if soft[j] else (STRICT_VALUE,)
        guaranteed = bool(rng.random() < guaranteed_share) and _reserve(
            free, slots[-1], int(need[j]), int(size[j])
        )
        jobs.append(
            {
                "id": f"slo-{j}",
                "scale_factor": int(size[j]),
                "remaining_time": float(need[j] * lease - rng.uniform(0, lease / 2)),
                "job_class": "soft" if soft[j] else "strict",
                "deadlines": [
                    {"time": float(t * lease), "value": v}
                    for t, v in zip(slots, values, strict=False)
                ],
                "guaranteed": guaranteed,
            }
        )
    be_size = rng.choice(SIZES[:4], size=best_effort_jobs, p=(0.6, 0.15, 0.15, 0.1))
    for j in range(best_effort_jobs):
        jobs.append(
            {
                "id": f"be-{j}",
                "scale_factor": int(be_size[j]),
                "remaining_time": float(rng.lognormal(np.log(3 * lease), 1.0)),
                "job_class": "best_effort",
            }
        )
    return {
        "policy": "deadline_admission",
        "gpu_types": [{"name": "v100", "count": capacity}],
        "nodes": [{"id": f"node-{n}", "gpus": gpus_per_node} for n in range(nodes)],
        "lease_seconds": lease,
        "now": 0.0,
        "jobs": jobs,
    }


def _reserve(free: np.ndarray, before: int, count: int, size: int) -> bool:
    """Take `count` latest slots before `before` with `size` GPUs free, if there are enough."""
    from formulations.deadline_problem import round_up

    reserve = int(round_up(np.array([size]), 8)[0])
    room = np.flatnonzero(free[:before] >= reserve)
    if room.size < count:
        return False
    free[room[-count:]] -= reserve
    return True
