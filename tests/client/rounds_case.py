"""The talk's round example (README): three jobs on one V100, one P100 and one K80."""

from __future__ import annotations

from typing import Any

ROUND = 360.0
ROUNDS_REQUEST: dict[str, Any] = {
    "snapshot": {
        "nodes": [
            {"id": "v0", "gpus": 1, "gpu_type": "v100"},
            {"id": "p0", "gpus": 1, "gpu_type": "p100"},
            {"id": "k0", "gpus": 1, "gpu_type": "k80"},
        ],
        "jobs": [
            {"id": f"job{i}", "throughput": {"v100": 3.0, "p100": 2.0, "k80": 1.0}}
            for i in range(3)
        ],
    },
    "allocation": {
        "job0": {"v100": 0.6, "p100": 0.4},
        "job1": {"v100": 0.2, "p100": 0.6, "k80": 0.2},
        "job2": {"v100": 0.2, "k80": 0.8},
    },
    "received": {
        "job0": {"v100": 3 * ROUND, "p100": ROUND},
        "job1": {"v100": ROUND, "p100": 3 * ROUND},
        "job2": {"k80": 4 * ROUND},
    },
    "previous": {"job0": {"v0": 1}, "job1": {"p0": 1}, "job2": {"k0": 1}},
}
