"""The request each pooled route shows in its OpenAPI document: a small real snapshot that the
service answers 200, so that the interactive page's "Try it out" → "Execute" works as filled.

Two GPU types and three jobs, small enough to read in the page's editor; `tests/api` posts
every example to a running service."""

from __future__ import annotations

from typing import Any

SNAPSHOT: dict[str, Any] = {
    "gpu_types": [{"name": "v100", "count": 2}, {"name": "k80", "count": 2}],
    "jobs": [
        {"id": "resnet", "throughput": {"v100": 4.0, "k80": 1.0}},
        {"id": "lstm", "throughput": {"v100": 2.0, "k80": 1.5}},
        {"id": "bert", "throughput": {"v100": 3.0, "k80": 0.5}, "scale_factor": 2},
    ],
}

SOLVE: dict[str, Any] = {
    "policy": "max_min_fairness",
    "snapshot": SNAPSHOT,
    "options": {"time_limit": 10},
}

COMPARE: dict[str, Any] = {
    "policy": "max_min_fairness",
    "before": SNAPSHOT,
    "patch": {"gpus": {"v100": 2}},
}

ROUNDS: dict[str, Any] = {
    "snapshot": {
        "nodes": [
            {"id": "node-v", "gpus": 2, "gpu_type": "v100"},
            {"id": "node-k", "gpus": 2, "gpu_type": "k80"},
        ],
        "jobs": SNAPSHOT["jobs"],
    },
    "policy": "max_min_fairness",
    # Seconds each job has run on each type so far (a job new to the cluster: none).
    "received": {"resnet": {"v100": 360.0}, "lstm": {"k80": 360.0}, "bert": {}},
}
