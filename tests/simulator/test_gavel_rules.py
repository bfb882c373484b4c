"""Gavel's simulator's ways of enacting an allocation (`simulator.enact.gavel`), hand-solved:
an agnostic answer spread over the types a job's gang fits in proportion to their GPUs, and
an agnostic policy's job served on every type as the queues' order changes round to round."""

from __future__ import annotations

import pytest

from apportion.simulator.config import Resolve, SimConfig
from apportion.simulator.enact.gavel import spread
from apportion.simulator.engine import simulate
from tests.simulator.helpers import job, trace

ROUND = 360.0


def test_an_agnostic_answer_is_spread_in_proportion_to_the_gpus() -> None:
    # 1 V100 and 3 K80s: "a" (total 1) gets 1/4 and 3/4; "b" (total 1/2) 1/8 and 3/8; "w",
    # a gang of 2, fits only the K80s and keeps its 1/2 there. Loads: V100 3/8, K80 5/2.
    given = {"a": {"v100": 1.0}, "b": {"k80": 0.5}, "w": {"v100": 0.25, "k80": 0.25}}
    out = spread(given, {"v100": 1, "k80": 3}, {"a": 1, "b": 1, "w": 2})
    assert out == {
        "a": {"k80": pytest.approx(0.75), "v100": pytest.approx(0.25)},
        "b": {"k80": pytest.approx(0.375), "v100": pytest.approx(0.125)},
        "w": {"k80": pytest.approx(0.5), "v100": 0.0},
    }


def test_a_spread_that_would_over_fill_a_type_is_not_made() -> None:
    # "w" (a gang of 2) holds both K80s all the time; "a" spread would put 2/3 of its time
    # there too (K80 load 8/3 > 2): the answer is enacted as given.
    given = {"a": {"v100": 1.0}, "w": {"k80": 1.0}}
    assert spread(given, {"v100": 1, "k80": 2}, {"a": 1, "w": 2}) is given


def test_under_gavels_rule_an_agnostic_job_runs_on_every_type_it_is_spread_over() -> None:
    # One job, one V100 (twice as fast) and one K80. The agnostic answer, spread, gives it
    # half of each; with the queues in a random order each round it runs on both. The
    # heterogeneity-aware policy gives it the V100 only, and it never runs elsewhere.
    jobs = [job("a", 20 * ROUND, speed={"v100": 10.0, "k80": 5.0})]
    cluster = trace(jobs, {"v100": 1, "k80": 1}, per_node=1)
    rules = SimConfig(resolve=Resolve.parse("gavel"), round_rule="gavel")
    agnostic = simulate(cluster, rules, policy="max_min_agnostic").records
    assert agnostic.loc[0, "received_v100"] > 0 and agnostic.loc[0, "received_k80"] > 0
    aware = simulate(cluster, rules, policy="max_min_fairness").records
    assert aware.loc[0, "received_k80"] == 0
    assert aware.loc[0, "finish"] == pytest.approx(20 * ROUND)
