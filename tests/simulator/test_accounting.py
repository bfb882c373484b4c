"""What every run must satisfy: every step accounted for, no GPU used twice, the same records for
the same inputs, and summary numbers that agree with the records they summarize."""

from __future__ import annotations

from functools import cache

import numpy as np
import pandas as pd
import pytest

from apportion.simulator.config import SimConfig
from apportion.simulator.engine import simulate
from apportion.simulator.result import SimulationResult
from apportion.simulator.sources import TraceSpec
from apportion.simulator.trace import Deadline, Trace
from tests.simulator.helpers import job, trace


@cache
def gavel_head() -> Trace:
    return TraceSpec("gavel", jobs=32).load_trace()


@cache
def run(policy: str) -> SimulationResult:
    return simulate(gavel_head(), SimConfig(policy=policy, preemption_seconds=20.0))


@pytest.mark.parametrize("policy", ["max_min_fairness", "srtf"])
def test_every_step_of_every_job_is_accounted_for(policy: str) -> None:
    records = run(policy).records
    assert records["finished"].all()
    np.testing.assert_allclose(
        records["steps_done"] + records["steps_remaining"], records["total_steps"]
    )
    assert (records["steps_remaining"] == 0).all()
    series = run(policy).timeseries
    assert series["steps"].sum() == pytest.approx(records["steps_done"].sum(), rel=1e-9)


@pytest.mark.parametrize("policy", ["max_min_fairness", "srtf"])
def test_gpu_seconds_used_never_exceed_capacity(policy: str) -> None:
    result = run(policy)
    series, records = result.timeseries, result.records
    length = series["end"] - series["start"]
    cluster = gavel_head().cluster.gpu_counts
    for kind, count in cluster.items():
        assert (series[f"busy_{kind}"] <= count * length + 1e-6).all()
        assert (series[f"util_{kind}"] <= 1.0 + 1e-9).all()
        # What the cluster lent out is what the jobs held, GPU-second for GPU-second.
        held = (records[f"received_{kind}"] * records["scale_factor"]).sum()
        assert series[f"busy_{kind}"].sum() == pytest.approx(held)
    received = records[[f"received_{k}" for k in cluster]].sum(axis=1)
    np.testing.assert_allclose(received, records["run_seconds"])


def test_the_same_inputs_give_the_same_records() -> None:
    first = simulate(gavel_head(), SimConfig(preemption_seconds=20.0)).records
    pd.testing.assert_frame_equal(first, run("max_min_fairness").records)


def test_a_generated_trace_is_the_same_for_the_same_seed() -> None:
    spec = TraceSpec("poisson", jobs=6, load=20.0, seed=3)
    config = SimConfig(policy="srtf", max_time=48 * 3600.0)
    one = simulate(spec.load_trace(), config).records
    two = simulate(spec.load_trace(), config).records
    pd.testing.assert_frame_equal(one, two)
    other = TraceSpec("poisson", jobs=6, load=20.0, seed=4).load_trace()
    assert not one["total_steps"].equals(simulate(other, config).records["total_steps"])


def test_summary_agrees_with_the_records() -> None:
    result = run("max_min_fairness")
    jct = result.records["jct"]
    summary = result.summary
    assert summary["jct_mean"] == pytest.approx(jct.mean())
    assert summary["jct_median"] == pytest.approx(jct.median())
    assert summary["jct_p95"] == pytest.approx(np.percentile(jct, 95))
    assert summary["jct_p99"] == pytest.approx(np.percentile(jct, 99))
    assert summary["makespan"] == pytest.approx(
        result.records["finish"].max() - result.records["arrival"].min()
    )
    assert summary["policy_calls"] == len(result.calls)
    assert summary["simulator_seconds"] == pytest.approx(
        summary["wall_seconds"] - summary["policy_seconds"]
    )


def test_a_lone_job_has_rho_one_and_fills_what_it_holds() -> None:
    result = simulate(trace([job("a", 1000.0)], {"v100": 2}), SimConfig())
    assert result.records.loc[0, "ftf_rho"] == pytest.approx(1.0)
    assert result.summary["utilization_v100"] == pytest.approx(0.5)
    assert result.summary["queueing_delay_mean"] == 0.0


def test_deadlines_earn_the_value_of_the_option_met() -> None:
    soft = [Deadline(500.0, 10.0), Deadline(1500.0, 5.0)]
    jobs = [
        job("first", 1000.0, deadlines=soft),
        job("second", 1000.0, arrival=10.0, deadlines=[Deadline(1500.0, 3.0)]),
        job("plain", 100.0, arrival=20.0),
    ]
    result = simulate(trace(jobs), SimConfig(policy="fifo_baseline", round_seconds=100.0))
    by_id = result.records.set_index("job")
    assert by_id.loc["first", "deadline_met"] and by_id.loc["first", "value_earned"] == 5.0
    assert not by_id.loc["second", "deadline_met"] and by_id.loc["second", "value_earned"] == 0.0
    assert pd.isna(by_id.loc["plain", "deadline_met"])
    summary = result.summary
    assert summary["slo_jobs"] == 2
    assert summary["deadline_met_fraction"] == 0.5
    assert summary["value_earned"] == 5.0
    assert summary["best_effort_jct_mean"] == pytest.approx(by_id.loc["plain", "jct"])


def test_max_time_stops_the_run_and_says_so() -> None:
    result = simulate(trace([job("long", 10_000.0)]), SimConfig(max_time=3600.0))
    row = result.records.iloc[0]
    assert not row["finished"]
    assert "max_time" in row["reason"]
    assert row["steps_done"] == pytest.approx(3600.0 * 10.0)


def test_cpu_time_splits_into_the_policy_and_the_simulator() -> None:
    summary = run("max_min_fairness").summary
    calls = run("max_min_fairness").calls
    assert summary["policy_cpu_seconds"] == pytest.approx(calls["cpu_seconds"].sum())
    assert 0.0 < summary["policy_cpu_seconds"] <= summary["cpu_seconds"]
    share = (summary["cpu_seconds"] - summary["policy_cpu_seconds"]) / summary["cpu_seconds"]
    assert summary["simulator_cpu_share"] == pytest.approx(share)
