"""Baselines as policies of the same simulator: their orders worked out by hand."""

from __future__ import annotations

import pytest

from apportion.simulator.clients import ApportionPolicy
from apportion.simulator.config import SimConfig
from apportion.simulator.engine import simulate
from apportion.simulator.policies import make_decider
from apportion.simulator.trace import Deadline
from tests.simulator.helpers import job, trace

ROUND = 100.0


def _finish(policy: str, jobs: list, **options: object) -> dict[str, float]:
    config = SimConfig(policy=policy, options=options, round_seconds=ROUND)
    result = simulate(trace(jobs), config)
    return dict(zip(result.records["job"], result.records["finish"], strict=True))


def test_srtf_runs_the_shortest_remaining_job_first() -> None:
    jobs = [job("long", 2000.0), job("short", 300.0), job("mid", 1000.0)]
    assert _finish("srtf", jobs) == pytest.approx({"short": 300.0, "mid": 1300.0, "long": 3300.0})


def test_las_preempts_for_the_job_with_least_attained_service() -> None:
    jobs = [job("old", 10_000.0), job("new", 1000.0, arrival=1000.0)]
    assert _finish("las", jobs) == pytest.approx({"old": 11_000.0, "new": 2000.0})


def test_two_d_las_ranks_by_gpu_time_queues_then_by_start() -> None:
    """Tiresias's discretized 2D-LAS with one threshold at 500 GPU-seconds. `old` (2 GPUs) has
    600 GPU-seconds at 300 s, so `new` (queue 0) preempts it; after 300 s `new` has 600 too and
    both share queue 1, where the earlier start goes first: `old` runs its last 1700 s
    (600 → 2300), then `new` its last 700 s."""
    jobs = [job("old", 2000.0, gpus=2), job("new", 1000.0, arrival=300.0, gpus=2)]
    finish = _finish_on("2d_las", jobs, {"v100": 2}, thresholds=[500.0])
    assert finish == pytest.approx({"old": 2300.0, "new": 3000.0})
    # With no threshold in reach it is plain FIFO by start: `old` is never preempted.
    finish = _finish_on("2d_las", jobs, {"v100": 2}, thresholds=[1e9])
    assert finish == pytest.approx({"old": 2000.0, "new": 3000.0})


def _finish_on(
    policy: str, jobs: list, gpus: dict[str, int], **options: object
) -> dict[str, float]:
    config = SimConfig(policy=policy, options=options, round_seconds=ROUND)
    result = simulate(trace(jobs, gpus), config)
    return dict(zip(result.records["job"], result.records["finish"], strict=True))


def test_edf_runs_the_earliest_deadline_first() -> None:
    jobs = [
        job("relaxed", 500.0, deadlines=[Deadline(5000.0)]),
        job("urgent", 500.0, arrival=100.0, deadlines=[Deadline(700.0)]),
    ]
    finish = _finish("edf", jobs)
    assert finish["urgent"] == pytest.approx(600.0)
    assert finish["relaxed"] == pytest.approx(1000.0)


def test_fifo_baseline_does_not_preempt_a_running_job() -> None:
    jobs = [job("first", 1000.0), job("second", 100.0, arrival=50.0)]
    assert _finish("fifo_baseline", jobs) == pytest.approx({"first": 1000.0, "second": 1100.0})


def test_a_baseline_puts_each_job_on_its_fastest_type_with_room() -> None:
    speed = {"v100": 10.0, "k80": 2.0}
    jobs = [job("a", 1000.0, speed=speed), job("b", 1000.0, speed=speed)]
    result = simulate(trace(jobs, {"v100": 1, "k80": 1}), SimConfig(policy="fifo_baseline"))
    by_id = result.records.set_index("job")
    assert by_id.loc["a", "received_v100"] == pytest.approx(1000.0)
    assert by_id.loc["b", "received_k80"] > 0  # b waits on nothing: the slow type is free


def test_max_min_agnostic_is_max_min_blind_to_gpu_types() -> None:
    decider = make_decider("max_min_agnostic", {})
    assert isinstance(decider, ApportionPolicy)
    assert decider.name == "max_min_fairness"
    assert decider.options == {"heterogeneity_aware": False}


def test_an_unknown_policy_names_the_choices() -> None:
    with pytest.raises(ValueError, match="srtf"):
        make_decider("nope", {})
