"""Max total throughput and throughput per dollar (FORMULATIONS §4)."""

from __future__ import annotations

import numpy as np
import pytest

from apportion.solver import InputError, Status, solve
from tests.allocation_checks import assert_feasible_allocation
from tests.conformance.cases_objectives import THROUGHPUT
from tests.formulations.fairness.lp_oracle import Cluster, random_snapshot

# a = (k80 1, v100 4), b = (k80 1, v100 2), one GPU each. Each job runs at most all the time, so
# the best is a on v100 (4) and b on k80 (1): 5 steps/s.
TWO_BY_TWO = THROUGHPUT


def test_max_total_throughput_hand_solved() -> None:
    result = solve(TWO_BY_TWO, policy="max_total_throughput")
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(5.0)
    x = assert_feasible_allocation(result, TWO_BY_TWO)
    assert x == pytest.approx(np.array([[0.0, 1.0], [1.0, 0.0]]))


def test_normalized_throughput_hand_solved() -> None:
    # prop_a = 2.5, prop_b = 1.5: a → v100 and b → k80 scores 4/2.5 + 1/1.5 = 34/15, the other
    # way round 1/2.5 + 2/1.5 = 26/15.
    result = solve(TWO_BY_TWO, policy="max_total_throughput", options={"normalized": True})
    assert result.objective == pytest.approx(34 / 15)


def test_throughput_per_dollar_hand_solved() -> None:
    # T/p: a = (2, 2), b = (2, 1): a → v100 and b → k80 give 4, the best (each row ≤ 1 in time).
    result = solve(TWO_BY_TWO, policy="throughput_per_dollar")
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(4.0)
    x = assert_feasible_allocation(result, TWO_BY_TWO)
    assert x == pytest.approx(np.array([[0.0, 1.0], [1.0, 0.0]]))


def test_gang_price_divides_by_the_scale_factor() -> None:
    # Two GPUs at price 1: a gang of 2 at 3 steps/s and a single job at 2 steps/s; both at once
    # need 3 GPUs. T/p: maximize 3x_g + 2x_s s.t. 2x_g + x_s ≤ 2, x ≤ 1 → x_s = 1, x_g = 1/2: 3.5
    # (per GPU the single job earns 2, the gang 1.5). Gang price T/(s p): 1.5x_g + 2x_s, same
    # optimum point: 2.75.
    snapshot = {
        "gpu_types": [{"name": "v100", "count": 2, "price_per_hour": 1.0}],
        "jobs": [
            {"id": "gang", "scale_factor": 2, "throughput": {"v100": 3.0}},
            {"id": "single", "throughput": {"v100": 2.0}},
        ],
    }
    plain = solve(snapshot, policy="throughput_per_dollar")
    gang = solve(snapshot, policy="throughput_per_dollar", options={"gang_price": True})
    assert plain.objective == pytest.approx(3.5)
    assert gang.objective == pytest.approx(2.75)


def test_per_dollar_needs_positive_prices_for_usable_types() -> None:
    snapshot = {
        "gpu_types": [
            {"name": "k80", "count": 1},
            {"name": "v100", "count": 1, "price_per_hour": 0},
        ],
        "jobs": [{"id": "a", "throughput": {"k80": 1.0, "v100": 2.0}}],
    }
    with pytest.raises(InputError) as info:
        solve(snapshot, policy="throughput_per_dollar")
    locs = {e.loc for e in info.value.errors}
    assert locs == {
        ("snapshot", "gpu_types", 0, "price_per_hour"),
        ("snapshot", "gpu_types", 1, "price_per_hour"),
    }


@pytest.mark.parametrize("seed", range(5))
def test_random_instances_match_an_independent_lp(seed: int) -> None:
    rng = np.random.default_rng(200 + seed)
    snapshot = random_snapshot(rng, int(rng.integers(2, 8)), int(rng.integers(1, 4)))
    cluster = Cluster.of(snapshot)
    best = cluster.max_linear(cluster.t)
    result = solve(snapshot, policy="max_total_throughput")
    assert result.objective == pytest.approx(best, rel=1e-9)
    assert_feasible_allocation(result, snapshot)
    per_dollar = cluster.max_linear(cluster.t / cluster.price[None, :])
    result = solve(snapshot, policy="throughput_per_dollar")
    assert result.objective == pytest.approx(per_dollar, rel=1e-9)
