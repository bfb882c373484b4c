"""`SimConfig.job_series`: every running job's progress in every interval, opt-in."""

from __future__ import annotations

from dataclasses import replace

import pytest

from apportion.simulator.config import SimConfig
from apportion.simulator.engine import simulate
from tests.simulator.helpers import job, trace

ROUND = 360.0


def test_each_jobs_steps_per_interval_add_up_to_its_work() -> None:
    jobs = [job("a", 3 * ROUND), job("b", 2 * ROUND, speed={"v100": 10.0, "k80": 5.0})]
    result = simulate(trace(jobs, {"v100": 1, "k80": 1}), SimConfig(job_series=True))
    series = result.job_series
    assert list(series.columns) == ["start", "end", "job", "gpu_type", "gpus", "steps"]
    done = series.groupby("job")["steps"].sum()
    totals = result.records.set_index("job")["total_steps"]
    assert done.to_dict() == pytest.approx(totals.to_dict())
    # A row's steps are its throughput on that type over the interval (or what was left).
    speed = {("a", "v100"): 10.0, ("b", "v100"): 10.0, ("b", "k80"): 5.0}
    for row in series.itertuples():
        assert row.steps <= speed[(row.job, row.gpu_type)] * (row.end - row.start) + 1e-6
    assert set(series["gpus"]) == {1}


def test_entities_shares_over_time_come_from_the_series() -> None:
    # Two jobs of equal speed on one GPU, entity weights 1 : 3: the one of weight 3 runs 3 of
    # every 4 rounds.
    jobs = [job("light", 100 * ROUND), job("heavy", 100 * ROUND)]
    jobs = [replace(j, entity=j.id) for j in jobs]
    config = SimConfig(
        policy="hierarchical",
        entity_weights={"light": 1.0, "heavy": 3.0},
        job_series=True,
        max_time=40 * ROUND,
    )
    series = simulate(trace(jobs), config).job_series
    steps = series.groupby("job")["steps"].sum()
    assert steps["heavy"] / steps.sum() == pytest.approx(0.75, abs=0.03)


def test_off_by_default() -> None:
    result = simulate(trace([job("a", ROUND)]), SimConfig())
    assert result.job_series.empty
