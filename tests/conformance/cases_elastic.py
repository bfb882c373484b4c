"""Hand-solved instances of the elastic family (FORMULATIONS §9)."""

from __future__ import annotations

from typing import Any

from apportion.solver import SolveResult
from tests.conformance.case import Case

# a: 4 GPUs, b: 2. x: a 1/2/4 → 1, 1.8, 3; b 1/2 → 2, 3.5. y: a 1/2 → 1, 1.9; b 1 → 1.5. z: a 1.
# Listing the assignments that fit: x b×2, y a×2, z a×1 is best for every integral objective:
# Sia (p = −0.5) 3.5^−½ + 1.9^−½ + 1; total 3.5 + 1.9 + 1 = 6.4; ONES the most GPUs (5: with x
# on a×4 only y on b×1 fits, 5 again but 133.3 + 6.7 GPU-seconds) and 100/3.5·2 + 10/1.9·2 + 50.
TWO_TYPES: dict[str, Any] = {
    "gpu_types": [{"name": "a", "count": 4}, {"name": "b", "count": 2}],
    "jobs": [
        {"id": "x", "elastic": {"remaining": 100.0, "configurations": [
            {"gpu_type": "a", "gpus": 1, "goodput": 1.0},
            {"gpu_type": "a", "gpus": 2, "goodput": 1.8},
            {"gpu_type": "a", "gpus": 4, "goodput": 3.0},
            {"gpu_type": "b", "gpus": 1, "goodput": 2.0},
            {"gpu_type": "b", "gpus": 2, "goodput": 3.5}]}},
        {"id": "y", "elastic": {"remaining": 10.0, "configurations": [
            {"gpu_type": "a", "gpus": 1, "goodput": 1.0},
            {"gpu_type": "a", "gpus": 2, "goodput": 1.9},
            {"gpu_type": "b", "gpus": 1, "goodput": 1.5}]}},
        {"id": "z", "elastic": {"remaining": 50.0, "configurations": [
            {"gpu_type": "a", "gpus": 1, "goodput": 1.0}]}},
    ],
}  # fmt: skip

# One GPU of a and b. p: a → 1, b → 3 (normalized); q: a → 1, b → 1.5. q takes s of b, p the
# rest: 1 + 0.5 s = 3 − 2 s at s = 0.8: level 1.4.
SHARES: dict[str, Any] = {
    "gpu_types": [{"name": "a", "count": 1}, {"name": "b", "count": 1}],
    "jobs": [
        {"id": "p", "elastic": {"configurations": [{"gpu_type": "a", "gpus": 1, "goodput": 2},
                                                   {"gpu_type": "b", "gpus": 1, "goodput": 6}]}},
        {"id": "q", "elastic": {"configurations": [{"gpu_type": "a", "gpus": 1, "goodput": 4},
                                                   {"gpu_type": "b", "gpus": 1, "goodput": 6}]}},
    ],
}  # fmt: skip


def _configurations(expected: list[int]) -> Any:
    def check(result: SolveResult) -> None:
        assert [job.metrics["configuration"] for job in result.jobs] == expected
        assert {g.name: g.used for g in result.gpu_types} == {"a": 3.0, "b": 2.0}

    return check


CASES = [
    Case("sia", "sia", TWO_TYPES, 3.5**-0.5 + 1.9**-0.5 + 1.0, check=_configurations([4, 1, 0])),
    Case(
        "elastic max goodput",
        "elastic_max_goodput",
        TWO_TYPES,
        6.4,
        check=_configurations([4, 1, 0]),
    ),
    Case(
        "ones",
        "ones",
        TWO_TYPES,
        100 / 3.5 * 2 + 10 / 1.9 * 2 + 50,
        check=_configurations([4, 1, 0]),
    ),
    Case("elastic max-min", "elastic_max_min", SHARES, 1.4),
]
