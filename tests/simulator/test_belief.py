"""Truth apart from belief: the policy is told seeded lognormal errors, the jobs run at the
truth, and the online estimator learns the rates it sees jobs run at."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from apportion.simulator.belief import Belief, belief_for
from apportion.simulator.config import Resolve, SimConfig
from apportion.simulator.engine import simulate
from apportion.simulator.sources import TraceSpec
from apportion.simulator.state import JobStates
from tests.cli_runner import invoke
from tests.simulator.helpers import job, trace

ROUND = 360.0


def test_the_policy_is_told_the_truth_times_a_seeded_lognormal_error() -> None:
    speed = {"v100": 10.0, "k80": 2.0}
    table = JobStates.from_trace(trace([job("a", 3600.0, speed=speed)], {"v100": 1, "k80": 1}))
    document = {"jobs": [{"id": "a", "throughput": {"v100": 10.0, "k80": 2.0}}]}
    told = Belief(table, 0.3, online=False, seed=7).view(document)["jobs"][0]["throughput"]
    for gpu, truth in (("v100", 10.0), ("k80", 2.0)):
        words = [7, *(zlib.crc32(w.encode()) for w in ("a", "", gpu))]
        z = np.random.default_rng(words).standard_normal()
        assert told[gpu] == pytest.approx(truth * np.exp(0.3 * z))
    again = Belief(table, 0.3, online=False, seed=7).view(document)["jobs"][0]["throughput"]
    other = Belief(table, 0.3, online=False, seed=8).view(document)["jobs"][0]["throughput"]
    assert again == told and other != told


@pytest.mark.parametrize("estimator", ["none", "online"])
def test_jobs_run_at_the_truth_whatever_the_policy_believes(estimator: str) -> None:
    config = SimConfig(throughput_noise=1.0, estimator=estimator)
    result = simulate(trace([job("a", 5000.0)]), config)
    assert result.records.iloc[0]["jct"] == pytest.approx(5000.0)  # 50,000 steps at 10 steps/s
    assert result.summary["estimate_error_first"] > 0


def test_online_learns_the_rate_it_sees_and_none_keeps_its_first_belief() -> None:
    # A GPU type the reference table lacks: each rate is learned on its own.
    jobs = [job("a", 10 * ROUND, speed={"a100": 10.0})]
    every_round = Resolve(arrivals=True, completions=True, every=1)
    errors = {}
    for estimator in ("none", "online"):
        config = SimConfig(throughput_noise=0.3, estimator=estimator, resolve=every_round)
        errors[estimator] = simulate(trace(jobs, {"a100": 1}), config).summary
    first = errors["none"]["estimate_error_first"]
    assert first > 0.01 and errors["none"]["estimate_error_last"] == pytest.approx(first)
    # The last call sees nine rounds: in log space the prior weighs 1/σ² = 11.1 and each
    # round 1/0.03² = 1,111.1, so the error left is 11.1 / (11.1 + 9 × 1,111.1) of the first.
    assert errors["online"]["estimate_error_first"] == pytest.approx(first)
    prior, one_round = 1 / 0.3**2, 1 / 0.03**2
    left = prior / (prior + 9 * one_round)
    assert errors["online"]["estimate_error_last"] == pytest.approx(first * left, rel=1e-6)


def test_a_belief_outside_rounds_mode_or_a_negative_noise_is_refused() -> None:
    with pytest.raises(ValueError, match="rounds mode only"):
        SimConfig(policy="tiresias_las", estimator="online", throughput_noise=0.3)
    with pytest.raises(ValueError, match="throughput_noise"):
        SimConfig(throughput_noise=-1.0, estimator="none")
    ran = invoke(["simulate", "gavel", "--throughput-noise", "-0.5", "--estimator", "none"])
    assert ran.exit_code == 2 and "throughput_noise" in ran.stderr


@pytest.mark.slow
def test_on_gavels_trace_the_online_belief_is_nearer_the_truth() -> None:
    # Rates seen on one type correct the others through the reference types' correlation.
    spec = TraceSpec("gavel")
    summaries = {
        e: simulate(spec.load_trace(), SimConfig(throughput_noise=0.3, estimator=e)).summary
        for e in ("none", "online")
    }
    none, online = summaries["none"], summaries["online"]
    assert online["estimate_error_mean"] < 0.6 * none["estimate_error_mean"]


def test_gavels_measured_table_as_the_noise_source() -> None:
    # Recommendation (batch size 512) on a V100: 23.318 steps/s in Gavel's oracle table,
    # 253.63 in its measured one; a job of a type neither table has is told the truth.
    kind = "Recommendation (batch size 512)"
    jobs = [
        job("r", 3600.0, speed={"v100": 23.318}, workload_class=kind),
        job("x", 3600.0, speed={"v100": 5.0}, workload_class="unknown model"),
    ]
    table = JobStates.from_trace(trace(jobs, {"v100": 1}))
    config = SimConfig(noise_source="gavel", estimator="none")
    belief = belief_for(table, config)
    assert belief is not None and belief.sigma == 0.4
    document = {"jobs": [{"id": j.id, "throughput": dict(j.throughput)} for j in jobs]}
    told = {j["id"]: j["throughput"]["v100"] for j in belief.view(document)["jobs"]}
    assert told["r"] == pytest.approx(253.63, rel=1e-3)
    assert told["x"] == pytest.approx(5.0, rel=1e-12)
