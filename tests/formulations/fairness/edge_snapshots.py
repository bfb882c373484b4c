"""Tiny random snapshots with the edge cases made on purpose, for the property tests that hold
each exact policy to an independent reference: no jobs at all, identical jobs, jobs with zero
throughput on some or every type (or none listed), gangs wider than every type, tied
throughputs, and two GPU types that are the same in all but name."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

#: Throughputs: a few values shared on purpose (ties, zeros) and arbitrary ones.
SPEEDS = st.one_of(
    st.sampled_from([0.0, 1.0, 2.0]), st.floats(0.25, 4.0).map(lambda v: round(v, 3))
)
KINDS = ("plain", "plain", "copy", "nowhere", "too_wide")


@st.composite
def tiny_snapshots(draw: st.DrawFn, max_jobs: int = 5, max_types: int = 3) -> dict[str, Any]:
    """A snapshot of 0–`max_jobs` jobs on 1–`max_types` GPU types of 1–3 GPUs."""
    names = [f"g{k}" for k in range(draw(st.integers(1, max_types)))]
    counts = [draw(st.integers(1, 3)) for _ in names]
    prices = [draw(st.sampled_from([0.5, 1.0, 2.5])) for _ in names]
    twin = len(names) >= 2 and draw(st.booleans())  # the last type copies the first
    if twin:
        counts[-1], prices[-1] = counts[0], prices[0]
    jobs: list[dict[str, Any]] = []
    for i in range(draw(st.integers(0, max_jobs))):
        kind = draw(st.sampled_from(KINDS))
        if kind == "copy" and jobs:
            jobs.append({**draw(st.sampled_from(jobs)), "id": f"j{i}"})
            continue
        speed = {n: draw(SPEEDS) for n in names}
        if kind == "nowhere":
            speed = dict.fromkeys(names, 0.0) if draw(st.booleans()) else {}
        if twin and names[0] in speed:
            speed[names[-1]] = speed[names[0]]
        wide = kind == "too_wide"
        jobs.append(
            {
                "id": f"j{i}",
                "scale_factor": max(counts) + 1 if wide else draw(st.sampled_from([1, 1, 2, 3])),
                "weight": draw(st.sampled_from([1.0, 1.0, 2.0])),
                "throughput": speed,
                "steps_remaining": draw(st.sampled_from([10.0, 20.0, 37.5])),
                "arrival_time": float(draw(st.integers(0, 2))),
            }
        )
    gpu_types = [
        {"name": n, "count": c, "price_per_hour": p}
        for n, c, p in zip(names, counts, prices, strict=True)
    ]
    return {"gpu_types": gpu_types, "jobs": jobs}


def runnable(snapshot: dict[str, Any]) -> list[bool]:
    """Per job: some type gives it a positive throughput and holds its whole gang."""
    counts = {g["name"]: g["count"] for g in snapshot["gpu_types"]}
    return [
        any(v > 0 and job.get("scale_factor", 1) <= counts[k] for k, v in job["throughput"].items())
        for job in snapshot["jobs"]
    ]
