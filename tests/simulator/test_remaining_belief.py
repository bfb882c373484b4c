"""Remaining times believed apart from the truth (lease mode): the noise is seeded, the policy
decides on the belief, the truth runs and scores, and the margin derived from σ keeps a
guarantee the bare belief breaks."""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

import numpy as np
import pytest

from apportion.simulator.config import SimConfig
from apportion.simulator.engine import simulate
from apportion.simulator.remaining_belief import RemainingBelief, derived_margin
from apportion.simulator.result import SimulationResult
from apportion.simulator.trace import Deadline, TraceJob
from tests.simulator.helpers import job, trace

LEASE = 600.0
SPEED = {"gpu": 1.0}
#: A noise seed whose draw for job `a` is below −1.8 (its remaining time believed at most
#: e^(−0.54) ≈ 0.58 of the truth) and for `b` within ±1: checked below, not assumed.
SEED = 4


def two_jobs() -> list[TraceJob]:
    """One 8-GPU node, 600-s leases: `a` needs 1,000 s (two leases), `b` 300 s (one), both by
    1,200 s: the two leases before the deadline hold one of them, never both."""
    deadline = [Deadline(1200.0, 10.0)]
    return [
        job("a", 1000.0, gpus=8, speed=SPEED, deadlines=deadline),
        job("b", 300.0, gpus=8, speed=SPEED, deadlines=deadline),
    ]


def run(jobs: list[TraceJob], **settings: Any) -> SimulationResult:
    config = SimConfig(policy="deadline_admission", lease_seconds=LEASE, **settings)
    return simulate(trace(jobs, {"gpu": 8}, per_node=8), config)


def test_the_margin_is_the_lognormal_bound_at_its_level() -> None:
    q = NormalDist().inv_cdf(0.999)
    assert derived_margin(0.3, 0.999) == pytest.approx(math.exp(0.3 * q) - 1)
    assert derived_margin(0.0, 0.999) == 0.0 and derived_margin(0.3, None) == 0.0
    # The bound holds as often as stated: over many jobs the truth exceeds belief × (1 + δ)
    # (e^(−σz) > 1 + δ) for about 1 − level of them.
    belief = RemainingBelief(None, 0.3, seed=0)  # type: ignore[arg-type]
    z = np.array([belief.z(f"job-{i}") for i in range(20_000)])
    beyond = np.mean(np.exp(-0.3 * z) > 1 + derived_margin(0.3, 0.99))
    assert beyond == pytest.approx(0.01, abs=0.003)


def test_the_noise_is_seeded_per_job_whatever_the_order() -> None:
    first, again = RemainingBelief(None, 0.3, 7), RemainingBelief(None, 0.3, 7)  # type: ignore[arg-type]
    names = [f"job-{i}" for i in range(50)]
    forward = [first.z(n) for n in names]
    backward = [again.z(n) for n in reversed(names)][::-1]
    assert forward == backward
    other = RemainingBelief(None, 0.3, 8)  # type: ignore[arg-type]
    assert [other.z(n) for n in names] != forward
    # The same run twice is the same run; another seed decides differently.
    jobs = two_jobs()
    one, two = (
        run(jobs, remaining_time_noise=0.3, seed=3),
        run(jobs, remaining_time_noise=0.3, seed=3),
    )
    assert one.records.equals(two.records)
    assert one.summary["remaining_time_error_mean"] == two.summary["remaining_time_error_mean"]


def test_belief_decides_truth_scores_and_the_margin_keeps_the_guarantee() -> None:
    belief = RemainingBelief(None, 0.3, SEED)  # type: ignore[arg-type]
    assert belief.z("a") < -1.8 and abs(belief.z("b")) < 1.0  # a looks like one lease
    oracle = run(two_jobs())
    bare = run(two_jobs(), remaining_time_noise=0.3, seed=SEED, remaining_time_level=None)
    margin = run(two_jobs(), remaining_time_noise=0.3, seed=SEED)
    # Told the truth, the policy guarantees one job and keeps its word.
    assert oracle.records["guaranteed"].sum() == 1 and oracle.summary["guarantees_broken"] == 0
    # Told a's 1,000 s are about 550, it promises both; the truth needs three leases by 1,200.
    assert bare.summary["guarantees_broken"] >= 1
    assert bare.records.set_index("job").loc["a", "guarantee_broken"]
    # With the margin derived from σ it plans a for up to 2.5 × its belief: no broken promise.
    assert margin.summary["guarantees_broken"] == 0 and margin.summary["guaranteed_missed"] == 0
    assert margin.summary["remaining_time_margin"] == pytest.approx(derived_margin(0.3, 0.999))
    assert margin.summary["satisfaction"] == oracle.summary["satisfaction"]
    # Jobs ran at the truth whatever was believed: a takes its 1,000 s from its first start.
    for result in (oracle, bare, margin):
        a = result.records.set_index("job").loc["a"]
        assert a["finish"] - a["first_start"] == pytest.approx(1000.0)


def test_online_the_margin_shrinks_as_the_job_is_seen_running() -> None:
    long = [job("long", 6000.0, gpus=8, speed=SPEED, deadlines=[Deadline(20_000.0, 10.0)])]
    fixed = run(long, remaining_time_noise=0.3, seed=1)
    learned = run(long, remaining_time_noise=0.3, seed=1, remaining_time_estimator="online")
    # The kept belief sends the same δ every call; the learned one less once progress is seen.
    assert fixed.summary["remaining_time_margin_mean"] == pytest.approx(derived_margin(0.3, 0.999))
    assert learned.summary["remaining_time_margin_mean"] < 0.5 * derived_margin(0.3, 0.999)
    assert learned.summary["remaining_time_error_mean"] < fixed.summary["remaining_time_error_mean"]
    assert learned.summary["guarantees_broken"] == 0


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"remaining_time_noise": -0.1}, "remaining_time_noise"),
        ({"remaining_time_level": 1.0}, "remaining_time_level"),
        ({"remaining_time_estimator": "oracle"}, "remaining_time_estimator"),
    ],
)
def test_bad_settings_are_refused_naming_them(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SimConfig(policy="deadline_admission", **settings)


def test_rounds_mode_refuses_a_remaining_time_belief() -> None:
    with pytest.raises(ValueError, match="leases mode only"):
        SimConfig(policy="max_min_fairness", remaining_time_noise=0.3)


def test_a_baseline_is_refused_a_belief_it_would_not_read() -> None:
    config = SimConfig(policy="edf", mode="leases", remaining_time_noise=0.3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="baseline 'edf'"):
        simulate(trace(two_jobs(), {"gpu": 8}, per_node=8), config)
