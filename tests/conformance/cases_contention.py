"""Hand-solved contention-penalized placements (FORMULATIONS §7)."""

from __future__ import annotations

from apportion.solver import SolveResult
from tests.conformance.case import Case


def _cfg(cls: str, gpus: int, nodes: int) -> dict:
    return {"workload_class": cls, "gpus": gpus, "nodes": nodes}


def _entry(target: tuple, co_runner: tuple, cs: float) -> dict:
    return {"target": _cfg(*target), "co_runner": _cfg(*co_runner), "cs": cs}


# Two 8-GPU nodes; FSDP runs on 4 + 4, MoE (8 GPUs) waits and has one shape left, 2 × 4, next to
# FSDP. Starting: U = 1, Φ = (1.5 + 2.5)/2 = 2; waiting: U = 1/2, Φ = 1.
#   W1 = 0.2: start 0.8 − 0.4 = 0.4 beats wait 0.4 − 0.2 = 0.2.
#   W1 = 0.9: start 0.1 − 1.8 = −1.7 loses to wait 0.05 − 0.9 = −0.85.
NEXT_TO_FSDP = {
    "nodes": [{"id": "n0", "gpus": 8}, {"id": "n1", "gpus": 8}],
    "jobs": [
        {"id": "fsdp", "workload_class": "FSDP", "placement": {"n0": 4, "n1": 4}},
        {"id": "moe", "workload_class": "MoE", "scale_factor": 8},
    ],
    "contention": {
        "entries": [
            _entry(("FSDP", 8, 2), ("MoE", 8, 2), 1.5),
            _entry(("MoE", 8, 2), ("FSDP", 8, 2), 2.5),
        ]
    },
}

# Three 4-GPU nodes; A runs on n0, n1 and B on n1, n2 (n1 is full). C (2 GPUs, shape 2 × 1) can
# only take n0 + n2, next to both. M = 3 jobs, 12 GPUs, W1 = W2 = 1/2.
#   waiting: U = 8/12; CS A = 1.25 (next to B), B = 1.05, C = 1: Φ = 3.3/3; objective −13/60.
#   worst:    A = max(1.25, 1.2), B = max(1.05, 1.1), C = max(1.4, 1.3): Φ = 3.75/3;
#             start: 5/12 − 0.625 = −5/24 > −13/60, so C starts.
#   additive: A = 1.45, B = 1.15, C = 1.7: Φ = 4.3/3; start: 5/12 − 4.3/6 = −0.3 < −13/60: waits.
BOTH_SIDES = {
    "nodes": [{"id": f"n{i}", "gpus": 4} for i in range(3)],
    "jobs": [
        {"id": "a", "workload_class": "A", "placement": {"n0": 2, "n1": 2}},
        {"id": "b", "workload_class": "B", "placement": {"n1": 2, "n2": 2}},
        {"id": "c", "workload_class": "C", "scale_factor": 2},
    ],
    "contention": {
        "entries": [
            _entry(("A", 4, 2), ("B", 4, 2), 1.25),
            _entry(("B", 4, 2), ("A", 4, 2), 1.05),
            _entry(("C", 2, 2), ("A", 4, 2), 1.4),
            _entry(("C", 2, 2), ("B", 4, 2), 1.3),
            _entry(("A", 4, 2), ("C", 2, 2), 1.2),
            _entry(("B", 4, 2), ("C", 2, 2), 1.1),
        ]
    },
}
ONLY_SPREAD = {"shapes": {"2": [[2, 1]]}}


def _started(job: str, expected: dict[str, int] | None):
    def check(result: SolveResult) -> None:
        assert result.job(job).placement == expected

    return check


CASES = [
    Case(
        "placement: MoE starts next to FSDP at W1 = 0.2",
        "contention_placement",
        NEXT_TO_FSDP,
        0.4,
        options={"w1": 0.2, "allow_single_node": False},
        check=_started("moe", {"n0": 4, "n1": 4}),
    ),
    Case(
        "placement: MoE waits at W1 = 0.9",
        "contention_placement",
        NEXT_TO_FSDP,
        -0.85,
        options={"w1": 0.9, "allow_single_node": False},
        check=_started("moe", None),
    ),
    Case(
        "placement: worst co-runner starts C",
        "contention_placement",
        BOTH_SIDES,
        -5 / 24,
        options={"w1": 0.5, **ONLY_SPREAD},
        check=_started("c", {"n0": 1, "n2": 1}),
    ),
    Case(
        "placement: additive penalty keeps C waiting",
        "contention_placement",
        BOTH_SIDES,
        -13 / 60,
        options={"w1": 0.5, "penalty": "additive", **ONLY_SPREAD},
        check=_started("c", None),
    ),
]
