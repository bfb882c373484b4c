"""Heterogeneity-agnostic versions of the objective policies (`makespan_agnostic`,
`finish_time_fairness_agnostic`): the policy is shown every job at one speed on every type it
can use, and the simulator enacts its answer at the true speeds."""

from __future__ import annotations

from typing import Any

from apportion.simulator.config import SimConfig
from apportion.simulator.engine import simulate
from apportion.simulator.policies import check_policy, policy_names
from apportion.simulator.snapshots import type_blind
from apportion.simulator.sources import TraceSpec
from apportion.simulator.traces.gavel import MINIMIZE_MAKESPAN_TRACE


def test_a_blind_snapshot_shows_each_job_its_mean_speed_where_it_runs() -> None:
    document: dict[str, Any] = {
        "gpu_types": [{"name": "v100", "count": 1}, {"name": "k80", "count": 3}],
        "jobs": [
            {"id": "a", "throughput": {"v100": 8.0, "k80": 2.0}},
            {"id": "b", "throughput": {"k80": 4.0}},
        ],
    }
    blind = type_blind(document)
    assert blind["jobs"][0]["throughput"] == {"v100": 3.5, "k80": 3.5}  # (8 + 3·2) / 4
    assert blind["jobs"][1]["throughput"] == {"k80": 4.0}  # runs on one type only
    assert document["jobs"][0]["throughput"] == {"v100": 8.0, "k80": 2.0}  # not changed


def test_the_variants_are_policies_a_simulation_accepts() -> None:
    for name in ("makespan_agnostic", "finish_time_fairness_agnostic"):
        check_policy(name)
        assert name in policy_names()


def test_blind_makespan_finishes_gavels_batch_later() -> None:
    trace = TraceSpec("gavel", source=str(MINIMIZE_MAKESPAN_TRACE)).load_trace()
    aware = simulate(trace, SimConfig(policy="makespan")).summary
    blind = simulate(trace, SimConfig(policy="makespan_agnostic")).summary
    assert aware["finished"] == blind["finished"] == 100
    assert blind["makespan"] > 1.1 * aware["makespan"]


def test_blind_finish_time_fairness_runs_and_is_no_fairer() -> None:
    trace = TraceSpec("gavel", jobs=30).load_trace()
    aware = simulate(trace, SimConfig(policy="finish_time_fairness")).summary
    blind = simulate(trace, SimConfig(policy="finish_time_fairness_agnostic")).summary
    assert blind["finished"] == aware["finished"] == 30
    assert blind["ftf_rho_max"] >= aware["ftf_rho_max"] - 1e-9
