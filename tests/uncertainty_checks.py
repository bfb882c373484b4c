"""What the robust policies' independent references read from a snapshot, straight from its
dict (not from the solver's arrays), and tiny snapshots with throughput bounds whose edge cases
are made on purpose: jobs already running on the nodes (each holds a gang: its placement), a
queue with nothing waiting (every job running), no jobs at all, jobs that can run nowhere or
have no steps left, and bounds of 0 and of 1 (a worst case with no progress)."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from hypothesis import strategies as st


class Dense(NamedTuple):
    """(N, T, δ, s, w, R): GPUs per type, throughputs, bounds (the default where a job gives
    none), scale factors (a running job's placement when it states none), weights and steps
    remaining (NaN where not given)."""

    n: np.ndarray
    t: np.ndarray
    delta: np.ndarray
    s: np.ndarray
    w: np.ndarray
    r: np.ndarray


def dense(snapshot: dict[str, Any], default: float) -> Dense:
    names = [g["name"] for g in snapshot["gpu_types"]]
    jobs = snapshot["jobs"]
    t = np.array([[j.get("throughput", {}).get(k, 0.0) for k in names] for j in jobs])
    t = t.reshape(len(jobs), len(names))  # also without jobs
    bounds = [j.get("throughput_uncertainty") or {} for j in jobs]
    gangs = [j.get("scale_factor", sum((j.get("placement") or {}).values()) or 1) for j in jobs]
    return Dense(
        n=np.array([g["count"] for g in snapshot["gpu_types"]], dtype=float),
        t=t,
        delta=np.array([[b.get(k, default) for k in names] for b in bounds]).reshape(t.shape),
        s=np.array(gangs, dtype=float),
        w=np.array([j.get("weight", 1.0) for j in jobs], dtype=float),
        r=np.array([j.get("steps_remaining", np.nan) for j in jobs], dtype=float),
    )


#: Bounds drawn for a job's types: exact, usual, wide, and no progress guaranteed at all.
BOUNDS = st.sampled_from([0.0, 0.1, 0.3, 0.6, 1.0])
SPEEDS = st.one_of(
    st.sampled_from([0.0, 1.0, 2.0]), st.floats(0.25, 4.0).map(lambda v: round(v, 3))
)
KINDS = ("waiting", "waiting", "running", "running", "nowhere", "done")


@st.composite
def running_snapshots(draw: st.DrawFn, max_jobs: int = 5) -> dict[str, Any]:
    """0–`max_jobs` jobs on nodes of 1–3 GPU types; with `queue` empty every job that can run
    is running. A running job holds GPUs of one node of a type it has a throughput on (its
    scale factor is what it holds) and may bound its throughputs; a `done` job has no steps
    left, a `nowhere` job no throughput."""
    names = [f"g{k}" for k in range(draw(st.integers(1, 3)))]
    nodes: list[dict[str, Any]] = [
        {"id": f"{name}-{i}", "gpus": draw(st.integers(1, 4)), "gpu_type": name}
        for name in names
        for i in range(draw(st.integers(1, 2)))
    ]
    free: dict[str, int] = {node["id"]: node["gpus"] for node in nodes}
    empty_queue = draw(st.booleans())
    jobs: list[dict[str, Any]] = []
    for i in range(draw(st.integers(0, max_jobs))):
        kind = "running" if empty_queue else draw(st.sampled_from(KINDS))
        speed = {k: draw(SPEEDS) for k in names}
        job: dict[str, Any] = {
            "id": f"j{i}",
            "weight": draw(st.sampled_from([1.0, 1.0, 2.0])),
            "throughput": speed,
            "scale_factor": draw(st.sampled_from([1, 1, 2])),
            "steps_remaining": 0.0 if kind == "done" else draw(st.sampled_from([10.0, 37.5])),
        }
        if kind == "nowhere":
            job["throughput"] = dict.fromkeys(names, 0.0)
        spots = [n for n in nodes if free[n["id"]] > 0 and speed[n["gpu_type"]] > 0]
        if kind == "running" and spots:
            node = draw(st.sampled_from(spots))
            held = draw(st.integers(1, free[node["id"]]))
            free[node["id"]] -= held
            job |= {"placement": {node["id"]: held}, "scale_factor": held}
        if draw(st.booleans()):
            job["throughput_uncertainty"] = {k: draw(BOUNDS) for k in speed if speed[k] > 0}
        jobs.append(job)
    counts = {name: sum(n["gpus"] for n in nodes if n["gpu_type"] == name) for name in names}
    gpu_types = [{"name": name, "count": counts[name]} for name in names]
    return {"gpu_types": gpu_types, "nodes": nodes, "jobs": jobs}
