"""Prometheus metrics: solves by policy and status, and how long they took (the pool keeps the
queue-depth and in-flight gauges)."""

from __future__ import annotations

from typing import Any

from prometheus_client import Counter, Histogram

SOLVES = Counter("apportion_solves_total", "Solves by policy and status", ["policy", "status"])
SECONDS = Histogram(
    "apportion_solve_seconds",
    "Seconds per solve in the worker (validate, build, solve)",
    ["policy"],
    buckets=(0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300),
)


def observe(meta: dict[str, Any]) -> None:
    policy = str(meta.get("policy", "unknown"))
    SOLVES.labels(policy, str(meta.get("status", "unknown"))).inc()
    if "solve_seconds" in meta:
        SECONDS.labels(policy).observe(float(meta["solve_seconds"]))
