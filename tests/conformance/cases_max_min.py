"""Hand-solved max-min fairness instances (FORMULATIONS §1)."""

from __future__ import annotations

from tests.allocation_checks import assert_feasible_allocation
from tests.conformance.case import Case


def _feasible(snapshot: dict) -> object:
    return lambda result: assert_feasible_allocation(result, snapshot)


# a = (k80 1, v100 4), b = (1, 2), one GPU of each: prop_a = 2.5, prop_b = 1.5. Both rows and both
# types bind; with b on k80 for 1 − d and v100 for d, a on the rest: u_a = (4 − 3d)/2.5 and
# u_b = (1 + d)/1.5 meet at d = 1/2, t = 1.
TWO_BY_TWO = {
    "gpu_types": [{"name": "k80", "count": 1}, {"name": "v100", "count": 1}],
    "jobs": [
        {"id": "a", "throughput": {"k80": 1.0, "v100": 4.0}},
        {"id": "b", "throughput": {"k80": 1.0, "v100": 2.0}},
    ],
}

# One GPU, weights 1:2: x_a ≥ t, x_b ≥ 2t, x_a + x_b ≤ 1, so t = 1/3 (b gets 2/3 of the time).
WEIGHTS = {
    "gpu_types": [{"name": "v100", "count": 1}],
    "jobs": [
        {"id": "a", "weight": 1, "throughput": {"v100": 1.0}},
        {"id": "b", "weight": 2, "throughput": {"v100": 1.0}},
    ],
}

# Two GPUs, scale factors 1, 2, 2, T = 1: u_j = s_j x_j, so capacity x_a + 2x_b + 2x_c ≤ 2 reads
# t + t + t ≤ 2 and t = 2/3.
SCALE_FACTORS = {
    "gpu_types": [{"name": "v100", "count": 2}],
    "jobs": [
        {"id": "a", "scale_factor": 1, "throughput": {"v100": 1.0}},
        {"id": "b", "scale_factor": 2, "throughput": {"v100": 1.0}},
        {"id": "c", "scale_factor": 2, "throughput": {"v100": 1.0}},
    ],
}

# A job that runs nowhere and one wider than the cluster are left out; the remaining job alone
# gets the whole (2-GPU) type: prop = 3, u = 3x/3 = x ≤ 1, t = 1.
UNPLACEABLE = {
    "gpu_types": [{"name": "v100", "count": 2}],
    "jobs": [
        {"id": "a", "throughput": {"v100": 3.0}},
        {"id": "nowhere", "throughput": {}},
        {"id": "too-wide", "scale_factor": 4, "throughput": {"v100": 9.0}},
    ],
}

CASES = [
    Case(
        "max-min 2 jobs × 2 types", "max_min_fairness", TWO_BY_TWO, 1.0, check=_feasible(TWO_BY_TWO)
    ),
    Case("max-min weights 1:2", "max_min_fairness", WEIGHTS, 1 / 3, check=_feasible(WEIGHTS)),
    Case(
        "max-min scale factors",
        "max_min_fairness",
        SCALE_FACTORS,
        2 / 3,
        check=_feasible(SCALE_FACTORS),
    ),
    Case(
        "max-min unplaceable jobs",
        "max_min_fairness",
        UNPLACEABLE,
        1.0,
        check=_feasible(UNPLACEABLE),
    ),
    # Agnostic: T := 1 wherever a job runs, prop = 1; two GPUs for two jobs give u = 1 each.
    Case(
        "max-min heterogeneity-agnostic",
        "max_min_fairness",
        TWO_BY_TWO,
        1.0,
        options={"heterogeneity_aware": False},
        check=_feasible(TWO_BY_TWO),
    ),
]
