"""YARN-CS: FIFO with strict consolidation and head-of-line blocking, never preempting."""

from __future__ import annotations

import pytest

from apportion.simulator.config import SimConfig
from apportion.simulator.engine import simulate
from apportion.simulator.policies import make_decider
from tests.simulator.helpers import job, trace

SPEED = {"gpu": 1.0}


def jobs() -> list:
    """Two 4-GPU nodes; `held` takes 3 GPUs of one node until 1,000 s; `big` (8 GPUs) needs two
    whole nodes; `small` (1 GPU) would fit beside `held` at once."""
    return [
        job("held", 1000.0, gpus=3, speed=SPEED),
        job("big", 500.0, gpus=8, arrival=10.0, speed=SPEED),
        job("small", 100.0, arrival=20.0, speed=SPEED),
    ]


def test_head_of_line_blocking() -> None:
    result = simulate(trace(jobs(), {"gpu": 8}), SimConfig(policy="yarn_cs", mode="schedule"))
    starts = result.records.set_index("job")["first_start"]
    assert starts["big"] == pytest.approx(1000.0)
    assert starts["small"] == pytest.approx(1500.0)  # behind big, though it fit at 20 s
    assert result.summary["moves"] == 0


def test_backfill_lets_the_small_job_pass() -> None:
    config = SimConfig(policy="yarn_cs", options={"backfill": True}, mode="schedule")
    starts = simulate(trace(jobs(), {"gpu": 8}), config).records.set_index("job")["first_start"]
    assert starts["small"] == pytest.approx(20.0)


def test_a_gang_larger_than_a_node_takes_whole_nodes_and_the_rest_on_one() -> None:
    six = [job("six", 100.0, gpus=6, speed=SPEED)]
    result = simulate(trace(six, {"gpu": 12}), SimConfig(policy="yarn_cs", mode="schedule"))
    assert result.summary["finished"] == 1


def test_unknown_options_and_modes_are_refused() -> None:
    with pytest.raises(ValueError, match="backfill"):
        make_decider("yarn_cs", {"bogus": 1})
    from apportion.simulator.clients import PolicyError

    with pytest.raises(PolicyError, match="schedule"):
        simulate(trace(jobs(), {"gpu": 8}), SimConfig(policy="yarn_cs", mode="rounds"))
