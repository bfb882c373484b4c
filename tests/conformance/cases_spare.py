"""Hand-solved instances of the spare-capacity stage of makespan and finish-time fairness
(FORMULATIONS §2a) and of the heterogeneity-agnostic makespan (§2b)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from apportion.solver import SolveResult, Status
from tests.allocation_checks import allocation_matrix, assert_feasible_allocation
from tests.conformance.case import Case

# One type of 2 GPUs: a needs all its time for 10 s (M* = 10), b needs 0.1 of its time. Any
# X_b in [0.1, 1] is optimal; the stage gives b all of it, so both GPUs run.
SPARE = {
    "gpu_types": [{"name": "g", "count": 2}],
    "jobs": [
        {"id": "a", "throughput": {"g": 1.0}, "steps_remaining": 10},
        {"id": "b", "throughput": {"g": 1.0}, "steps_remaining": 1},
    ],
}

# One type of 2 GPUs, isolated share 1 GPU each. a started 10 s ago with nothing done: D_a = 10,
# ρ_a = 1 + 1/eff_a ≥ 2, so ρ* = 2 (a all the time). b (new, 1 step): ρ_b = 1/eff_b ≤ 2 lets
# X_b be anything in [0.5, 1]; the stage gives b all of it, ρ_b = 1.
SPARE_FTF = {
    "gpu_types": [{"name": "g", "count": 2}],
    "jobs": [
        {"id": "a", "throughput": {"g": 1.0}, "steps_remaining": 10, "time_since_start": 10},
        {"id": "b", "throughput": {"g": 1.0}, "steps_remaining": 1},
    ],
}

# One V100 and two K80s, b and c on the V100 only (1 step at 1 step/s). Agnostic `usable`: time
# only on the V100, ½ each, M = 2. Gavel's definition with the V100's speed everywhere: each
# job full time anywhere, M = 1, at least one unit of time on K80s.
BLIND = {
    "gpu_types": [{"name": "v100", "count": 1}, {"name": "k80", "count": 2}],
    "jobs": [
        {"id": "b", "throughput": {"v100": 1.0}, "steps_remaining": 1},
        {"id": "c", "throughput": {"v100": 1.0}, "steps_remaining": 1},
    ],
}
GAVEL_BLIND = {
    "heterogeneity_aware": False,
    "agnostic_definition": "gavel",
    "reference_type": "v100",
}


def _all_time(snapshot: dict[str, Any], job: int) -> Any:
    def check(result: SolveResult) -> None:
        x = assert_feasible_allocation(result, snapshot)
        if result.status is not Status.OPTIMAL:
            return  # a first-order solver's uncertified answer: the first stage's, as it says
        assert x[job].sum() == pytest.approx(1.0, abs=1e-5)
        assert (snapshot["gpu_types"][0]["count"] - x.sum(axis=0)) == pytest.approx(0, abs=1e-5)

    return check


def _halves(result: SolveResult) -> None:
    x = assert_feasible_allocation(result, BLIND)
    assert x == pytest.approx(np.array([[0.5, 0.0], [0.5, 0.0]]), abs=1e-5)


def _full_time_anywhere(result: SolveResult) -> None:
    x = allocation_matrix(result, BLIND)
    assert x.sum(axis=1) == pytest.approx([1.0, 1.0], abs=1e-5)
    assert x[:, 1].sum() >= 1.0 - 1e-5  # on K80s, where neither makes progress


CASES = [
    Case("makespan, spare capacity", "makespan", SPARE, 10.0, check=_all_time(SPARE, 1)),
    Case(
        "finish-time fairness, spare capacity",
        "finish_time_fairness",
        SPARE_FTF,
        2.0,
        check=_all_time(SPARE_FTF, 1),
    ),
    Case(
        "makespan, agnostic",
        "makespan",
        BLIND,
        2.0,
        options={"heterogeneity_aware": False},
        check=_halves,
    ),
    Case(
        "makespan, Gavel's agnostic",
        "makespan",
        BLIND,
        1.0,
        options=GAVEL_BLIND,
        check=_full_time_anywhere,
    ),
]
