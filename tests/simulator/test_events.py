"""Event-driven decisions for every enactment (`SimConfig.events`): a job that arrives mid-round
starts at once, and an answer that says when it goes stale (a queue demotion) is asked again
then."""

from __future__ import annotations

import pytest

from apportion.simulator.config import SimConfig
from apportion.simulator.engine import simulate
from tests.simulator.helpers import job, trace

SPEED = {"gpu": 1.0}


@pytest.mark.parametrize("policy", ["fifo_baseline", "2d_las", "max_min_fairness"])
def test_a_job_arriving_mid_round_starts_at_once(policy: str) -> None:
    # `a` keeps one GPU busy, so the rounds go on while `b` arrives on the other.
    jobs = [job("a", 3000.0, speed=SPEED), job("b", 100.0, arrival=1000.0, speed=SPEED)]
    cluster = trace(jobs, {"gpu": 2})
    grid = simulate(cluster, SimConfig(policy=policy, mode="rounds"))
    events = simulate(cluster, SimConfig(policy=policy, mode="rounds", events=True))
    # On a 360 s grid b waits for the round that starts at 1,080 s.
    assert grid.records.set_index("job")["first_start"]["b"] == pytest.approx(1080.0)
    starts = events.records.set_index("job")["first_start"]
    assert starts["b"] == pytest.approx(1000.0)
    assert events.records.set_index("job")["finish"]["b"] == pytest.approx(1100.0)


def test_a_demotion_is_a_decision_point() -> None:
    """One GPU. a runs from 0; its queue limit is 100 GPU-seconds, so at 100 s it falls below b,
    which arrived at 50: b takes the GPU at 100 s exactly (the answer said so), not at the next
    round."""
    jobs = [job("a", 1000.0, speed=SPEED), job("b", 300.0, arrival=50.0, speed=SPEED)]
    options = {"thresholds": [100.0]}
    for mode in ("rounds", "schedule"):
        result = simulate(
            trace(jobs, {"gpu": 1}),
            SimConfig(policy="2d_las", options=options, mode=mode, events=True),
        )
        starts = result.records.set_index("job")["first_start"]
        assert starts["b"] == pytest.approx(100.0), mode


def test_periodic_re_solves_count_rounds_not_events() -> None:
    """every:2 in events mode re-solves at every second round boundary no event cut short."""
    jobs = [job(f"j{i}", 2000.0, speed=SPEED) for i in range(2)]
    config = SimConfig(policy="max_min_fairness", mode="rounds", events=True)
    from apportion.simulator.config import Resolve

    every = simulate(trace(jobs, {"gpu": 2}), config)
    two = simulate(
        trace(jobs, {"gpu": 2}), SimConfig(**{**config.__dict__, "resolve": Resolve(True, True, 2)})
    )
    # Rounds start at 0, 360, …, 1800: every second one re-solves (0, 720, 1440).
    assert every.summary["policy_calls"] == 1
    assert two.summary["policy_calls"] == 3
