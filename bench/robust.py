"""Robust max-min fairness against the nominal answer, on Gavel-like snapshots (FORMULATIONS §1f).

Each job is profiled on one GPU type (its throughput there known within 2 %) and extrapolated
to the others (known within δ = 0.1 or 0.3, the `uncertainty` option). Per row, on the same
snapshot: the worst job's guaranteed share (the robust LP's level t*, and the smallest exact
worst case over the box of the returned allocation); the nominal max-min answer's smallest exact
worst case and its worst realized share over 1,000 draws uniform in the box (what the nominal
level promised, and what it delivers); the total nominal throughput the robust answer gives up
against the nominal one (Σ_j eff_j(T) over every job, and the mean of the per-job ratios); and
the robust answer's worst realized share over the same draws, against its own guarantees (must
never fall below: `broken` counts the job-draws that do).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from apportion.formulations.uncertainty import worst_shares
from apportion.refdata.synthetic import gavel_snapshot
from apportion.solver import solve
from bench.harness import Case, Row

GROUP = "robust_max_min"
DRAWS = 1_000
PROFILED = 0.02  # the bound on the type each job was profiled on


def profiled_snapshot(jobs: int, seed: int) -> dict[str, Any]:
    """Gavel-like jobs, each bounded tightly on one random type it can run on."""
    snapshot = gavel_snapshot(jobs, seed=seed)
    rng = np.random.default_rng(seed)
    out = []
    for job in snapshot["jobs"]:
        types = sorted(k for k, v in job["throughput"].items() if v > 0)
        if types:
            known = types[int(rng.integers(len(types)))]
            job = {**job, "throughput_uncertainty": {known: PROFILED}}
        out.append(job)
    return {**snapshot, "jobs": out}


def _arrays(
    snapshot: dict[str, Any], default: float
) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    names = [g["name"] for g in snapshot["gpu_types"]]
    n = np.array([g["count"] for g in snapshot["gpu_types"]], dtype=float)
    jobs = snapshot["jobs"]
    t = np.array([[j["throughput"].get(k, 0.0) for k in names] for j in jobs])
    delta = np.array(
        [[j.get("throughput_uncertainty", {}).get(k, default) for k in names] for j in jobs]
    )
    s = np.array([j.get("scale_factor", 1) for j in jobs], dtype=float)
    return names, n, t, delta, s


def _matrix(result: Any, names: list[str]) -> np.ndarray:
    return np.array([[j.allocation.get(k, 0.0) for k in names] for j in result.jobs])


def measure(snapshot: dict[str, Any], delta_default: float) -> dict[str, Any]:
    """The figures of one row (see the module docstring)."""
    names, n, t, delta, s = _arrays(snapshot, delta_default)
    robust = solve(snapshot, "robust_max_min", uncertainty=delta_default)
    nominal = solve(snapshot, "max_min_fairness")
    xr, xn = _matrix(robust, names), _matrix(nominal, names)
    low, high = t * (1 - delta), t * (1 + delta)
    placed = xn.sum(axis=1) > 0
    rng = np.random.default_rng(2026)
    sample = t * (1 + rng.uniform(-1, 1, size=(DRAWS, *t.shape)) * delta)
    prop = sample @ n / n.sum()

    def realized(x: np.ndarray) -> np.ndarray:
        shares: np.ndarray = s * (sample * x).sum(axis=-1) / prop
        return shares[:, placed]

    guaranteed = np.array([j.metrics["guaranteed_share"] for j in robust.jobs])[placed]
    eff_r, eff_n = (t * xr).sum(axis=1)[placed], (t * xn).sum(axis=1)[placed]
    return {
        "level": float(robust.objective or 0.0),
        "guaranteed": float(guaranteed.min()),
        "nominal level": float(nominal.objective or 0.0),
        "nominal worst": float((s * worst_shares(xn, low, high, n))[placed].min()),
        "nominal drawn": float(realized(xn).min()),
        "robust drawn": float(realized(xr).min()),
        "broken": float((realized(xr) < guaranteed - 1e-9).sum()),
        "given up": float(1 - eff_r.sum() / eff_n.sum()),
        "given up mean": float(np.mean(1 - eff_r / eff_n)),
        "seconds": float(robust.solver.total_seconds),
        "status": robust.status.value,
    }


def _runner(jobs: int, delta: float) -> Callable[[Case], Row]:
    def run(case: Case) -> Row:
        snapshot = case.make()
        started = time.perf_counter()
        m = measure(snapshot, delta)
        total = time.perf_counter() - started
        note = (
            f"guaranteed min {m['guaranteed']:.4f} (level {m['level']:.4f}); nominal "
            f"level {m['nominal level']:.4f}, its worst case {m['nominal worst']:.4f}, worst "
            f"of {DRAWS} draws {m['nominal drawn']:.4f}; robust worst draw "
            f"{m['robust drawn']:.4f}, {m['broken']:.0f} broken; throughput given up "
            f"{m['given up']:.2%} (mean per job {m['given up mean']:.2%})"
        )
        return Row(
            case=case,
            jobs=jobs,
            types=3,
            validate=0.0,
            build=0.0,
            solve=m["seconds"],
            total=total,
            objective=m["level"],
            status=m["status"],
            backend="—",
            ratio=None,
            note=note,
        )

    return run


def _maker(jobs: int) -> Callable[[], dict[str, Any]]:
    return lambda: profiled_snapshot(jobs, seed=jobs)


def cases() -> list[Case]:
    return [
        Case(
            GROUP,
            f"gavel {jobs} jobs, profiled on one type, δ = {delta:g} elsewhere",
            _maker(jobs),
            "robust_max_min",
            {"uncertainty": delta},
            runner=_runner(jobs, delta),
        )
        for jobs in (64, 256)
        for delta in (0.1, 0.3)
    ]


if __name__ == "__main__":
    for c in cases():
        snap = c.make()
        print(c.name, measure(snap, c.options["uncertainty"]))
