"""When the policy is asked again and what runs in between: the interval between solves
(Gavel's 1,920 s), back-fill of jobs the last allocation does not cover, and time where a job
makes no progress never enacted, on traces worked out by hand and on Gavel's physical trace."""

from __future__ import annotations

import numpy as np
import pytest

from apportion.simulator.clients import Reply, Request
from apportion.simulator.config import GAVEL_RESET_SECONDS, Resolve, SimConfig
from apportion.simulator.engine import Engine, simulate
from apportion.simulator.sources import TraceSpec
from tests.simulator.helpers import job, trace

ROUND = 360.0


def test_gavels_rule_parses_to_its_parts() -> None:
    assert Resolve.parse("gavel") == Resolve(True, True, None, GAVEL_RESET_SECONDS, False)
    assert str(Resolve.parse("gavel")) == "arrivals,completions,interval:1920"
    assert Resolve.parse("gavel,backfill").backfill
    assert Resolve.parse("completions,interval:600") == Resolve(False, True, None, 600.0, False)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("interval:-5", "SECONDS must be a number ≥ 0"),
        ("interval:soon", "SECONDS must be a number ≥ 0"),
        ("backfill", "give at least one of arrivals, completions, every:N"),
        ("sometimes", "unknown trigger 'sometimes'"),
    ],
)
def test_a_bad_rule_says_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Resolve.parse(text)


def _two_jobs() -> list:
    # One 2-GPU node: "long" (one GPU, ten rounds) from t = 0, "late" from t = 100.
    return [job("long", 10 * ROUND), job("late", 1000.0, arrival=100.0)]


def test_an_arrival_waits_for_the_interval_and_is_then_solved_for() -> None:
    resolve = Resolve.parse("arrivals,completions,interval:1920")
    result = simulate(trace(_two_jobs(), {"v100": 2}), SimConfig(resolve=resolve))
    # Solves at 0, then at the first round boundary 1,920 s later (2,160 s); "late" is not in
    # the first allocation, so it waits for the second even though a GPU is free.
    assert result.calls["time"].tolist()[:2] == [0.0, 6 * ROUND]
    late = result.records.set_index("job").loc["late"]
    assert late["first_start"] == 6 * ROUND


def test_under_gavels_rules_an_arrival_between_resets_waits_for_the_next_reset() -> None:
    # As in Gavel's simulator: "late" is in no allocation until the reset 1,920 s after the
    # last (at the round boundary 2,160 s); until then it has no entry and runs nowhere,
    # though the second GPU is free all along.
    config = SimConfig(resolve=Resolve.parse("gavel"), round_rule="gavel")
    result = simulate(trace(_two_jobs(), {"v100": 2}), config)
    assert result.calls["time"].tolist()[:2] == [0.0, 6 * ROUND]
    late = result.records.set_index("job").loc["late"]
    assert late["first_start"] == 6 * ROUND
    assert late["finish"] == pytest.approx(6 * ROUND + 1000.0)


def test_under_gavels_rules_fifo_leaves_a_freed_gpu_idle_until_the_next_reset() -> None:
    # One V100 and one K80 (V100 twice as fast). FIFO at t = 0: "a" (two rounds) on the V100,
    # "b" on the K80. "a" finishes at 720 s; Gavel's simulator serves no priority-0 entry
    # under FIFO, so "b" stays on the K80 until the reset at 2,160 s: 10,800 of its 40,000
    # steps there, the other 29,200 on the V100 at 10 a second. (Under the deficit rule it
    # moves up at 720 s.)
    speed = {"v100": 10.0, "k80": 5.0}
    jobs = [job("a", 2 * ROUND, speed=speed), job("b", 4000.0, speed=speed)]
    cluster = trace(jobs, {"v100": 1, "k80": 1}, per_node=1)
    gavel = SimConfig(policy="fifo", resolve=Resolve.parse("gavel"), round_rule="gavel")
    finish = simulate(cluster, gavel).records.set_index("job")["finish"]
    assert finish["a"] == pytest.approx(2 * ROUND)
    assert finish["b"] == pytest.approx(6 * ROUND + 2920.0)
    deficit = SimConfig(policy="fifo", resolve=Resolve.parse("gavel"))
    moved = simulate(cluster, deficit).records.set_index("job")["finish"]
    assert moved["b"] == pytest.approx(2 * ROUND + (40000.0 - 3600.0) / 10.0)


def test_with_back_fill_an_arrival_runs_on_the_free_gpu_before_the_next_solve() -> None:
    resolve = Resolve.parse("gavel,backfill")
    result = simulate(trace(_two_jobs(), {"v100": 2}), SimConfig(resolve=resolve))
    assert result.calls["time"].tolist()[:2] == [0.0, 6 * ROUND]
    late = result.records.set_index("job").loc["late"]
    assert late["first_start"] == ROUND  # the next round boundary after its arrival
    assert late["finish"] == pytest.approx(ROUND + 1000.0)


def test_agnostic_makespan_time_on_k80s_is_never_enacted() -> None:
    # Two V100-only jobs on 1 V100 + 2 K80s; Gavel's agnostic makespan (V100 speed
    # everywhere) plans at least one job-time unit on the K80s. Nothing runs there; the V100's
    # queue takes the jobs whose time was all on K80s.
    jobs = [job("b", 2 * ROUND, speed={"v100": 1.0}), job("c", 2 * ROUND, speed={"v100": 1.0})]
    options = {
        "heterogeneity_aware": False,
        "agnostic_definition": "gavel",
        "reference_type": "v100",
    }
    config = SimConfig(policy="makespan", options=options, job_series=True)
    result = simulate(trace(jobs, {"v100": 1, "k80": 2}, per_node=1), config)
    assert result.records["finished"].all()
    assert set(result.job_series["gpu_type"]) == {"v100"}
    assert result.summary["makespan"] == pytest.approx(4 * ROUND)  # the V100 one job at a time


def test_agnostic_max_min_on_gavels_trace_never_runs_a_job_where_it_cannot_progress() -> None:
    loaded = TraceSpec("gavel").load_trace()
    no_k80 = {j.id for j in loaded.jobs if "k80" not in j.throughput}
    assert no_k80  # ResNet-50 at batch 128 with a gang of 2 or more
    options = {"heterogeneity_aware": False, "agnostic_definition": "gavel"}
    # Gavel's rule in one queue by priority: where such entries, served, held K80s for hours.
    serving = {"round_rule": "gavel", "round_order": "priority"}
    config = SimConfig(policy="max_min_fairness", options=options, **serving)
    engine = Engine(loaded, config)
    given: list[float] = []
    decide = engine.decider.decide

    def watched(request: Request) -> Reply:
        answer = decide(request)
        given.extend(answer.allocation.get(j, {}).get("k80", 0.0) for j in no_k80)
        return answer

    engine.decider.decide = watched  # type: ignore[method-assign]
    result = engine.run()
    # The policy gives such jobs K80 time (Gavel's definition counts it as a share) ...
    assert max(given) > 0.1
    # ... and the simulation never enacts it.
    received = result.records.set_index("job")["received_k80"]
    assert np.all(received.loc[sorted(no_k80)] == 0.0)
    assert result.records["finished"].all()
