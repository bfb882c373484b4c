"""Prometheus metrics: solves by policy and status, and how long they took."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

from solver import SolveResult

SOLVES = Counter("apportion_solves_total", "Solves by policy and status", ["policy", "status"])
SECONDS = Histogram(
    "apportion_solve_seconds",
    "Total seconds per solve (validate, build, solve)",
    ["policy"],
    buckets=(0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300),
)


def observe(result: SolveResult) -> None:
    SOLVES.labels(result.policy, result.status.value).inc()
    SECONDS.labels(result.policy).observe(result.solver.total_seconds)
