"""Hand-solved max-min fairness instances (FORMULATIONS §1)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from apportion.solver import SolveResult, Status
from tests.allocation_checks import assert_feasible_allocation
from tests.conformance.case import Case
from tests.formulations.fairness.max_min_oracle import linprog_max_min, scaled_max_min
from tests.formulations.fairness.test_pareto import NEAR_EDGE, SLOW_SPARE, idle_but_usable


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

# Gavel's heterogeneity-agnostic baseline (FORMULATIONS §1): k80 × 1, v100 × 1; a runs on both,
# b and c only on v100. Usable types (the default): prop_a = 1, prop_b = prop_c = 1/2, so a on the
# k80 and b, c with half of the v100 each give every share 1. Gavel's (T := 1 on every type,
# prop = 1): u_j = Σ_k X_jk, three jobs on two GPUs, t = 2/3, and the k80 time a cannot take
# (it has 2/3 of its time in all) is credited to b or c, which make no progress there.
AGNOSTIC = {
    "gpu_types": [{"name": "k80", "count": 1}, {"name": "v100", "count": 1}],
    "jobs": [
        {"id": "a", "throughput": {"k80": 1.0, "v100": 1.0}},
        {"id": "b", "throughput": {"v100": 1.0}},
        {"id": "c", "throughput": {"v100": 1.0}},
    ],
}


def _gavel_agnostic(result: SolveResult) -> None:
    shares = [j.normalized_share for j in result.jobs]
    assert shares == pytest.approx([2 / 3] * 3, rel=1e-6)
    credited = sum(result.job(j).allocation.get("k80", 0.0) for j in "bc")
    assert credited >= 1 / 3 - 1e-6
    # Progress is measured: b and c move only on the v100.
    for j in "bc":
        job = result.job(j)
        assert job.effective_throughput == pytest.approx(job.allocation.get("v100", 0.0), abs=1e-9)


APPLIED = {"ceiling", "second LP", "every job at the level"}


def _stage_said(result: SolveResult) -> bool:
    """The answer says the Pareto stage did not apply (a warning, or no optimal status)."""
    return result.status is not Status.OPTIMAL or any("Pareto stage" in w for w in result.warnings)


def _no_usable_gpu_idle(snapshot: dict[str, Any]) -> Callable[[SolveResult], None]:
    """No idle GPU worth 1e-6 of a job's throughput to a job with time left (an interior point
    leaves a few 1e-6 of a job's time on its 5,000-times slower type), or the answer says the
    Pareto stage did not apply."""

    def check(result: SolveResult) -> None:
        assert_feasible_allocation(result, snapshot)
        if result.summary["pareto"] in APPLIED:
            assert idle_but_usable(result, snapshot, gain=1e-6) == []
        else:
            assert _stage_said(result)

    return check


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
    Case(
        "max-min agnostic, usable types",
        "max_min_fairness",
        AGNOSTIC,
        1.0,
        options={"heterogeneity_aware": False},
        check=_feasible(AGNOSTIC),
    ),
    Case(
        "max-min agnostic, Gavel's definition",
        "max_min_fairness",
        AGNOSTIC,
        2 / 3,
        options={"heterogeneity_aware": False, "agnostic_definition": "gavel"},
        check=_gavel_agnostic,
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
    # Throughputs spanning 1e-3…9e3 (see test_pareto): the optimum by the independent LPs, and
    # no GPU left idle that a job with time left could use.
    Case(
        "max-min, a spare job's slow type",
        "max_min_fairness",
        SLOW_SPARE,
        linprog_max_min(SLOW_SPARE),
        check=_no_usable_gpu_idle(SLOW_SPARE),
        ill_conditioned=True,
    ),
    Case(
        "max-min, floors near the edge",
        "max_min_fairness",
        NEAR_EDGE,
        scaled_max_min(NEAR_EDGE),
        check=_no_usable_gpu_idle(NEAR_EDGE),
        ill_conditioned=True,
    ),
]
