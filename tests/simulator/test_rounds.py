"""Rounds mode on traces worked out by hand: a lone job, two jobs sharing one GPU under max-min,
a job that fits nowhere, preemption costs, space sharing, and the mechanism's convergence."""

from __future__ import annotations

import numpy as np
import pytest

from apportion.simulator.config import Resolve, SimConfig
from apportion.simulator.engine import Engine, simulate
from apportion.simulator.trace import TraceJob
from tests.simulator.helpers import job, trace

ROUND = 360.0


def test_a_lone_job_finishes_in_steps_over_throughput() -> None:
    result = simulate(trace([job("a", 5000.0, arrival=100.0)]), SimConfig())
    row = result.records.iloc[0]
    assert row["first_start"] == 100.0
    assert row["finish"] == pytest.approx(100.0 + 5000.0)
    assert row["jct"] == pytest.approx(5000.0)
    assert row["moves"] == 0  # one lease extension after another


def test_a_job_arriving_mid_round_waits_for_the_next_round() -> None:
    jobs = [job("long", 10 * ROUND, gpus=1), job("late", 1000.0, arrival=100.0)]
    result = simulate(trace(jobs, {"v100": 2}), SimConfig())
    late = result.records.set_index("job").loc["late"]
    assert late["first_start"] == ROUND  # the next round boundary, not 100 s
    assert late["finish"] == pytest.approx(ROUND + 1000.0)


def test_two_identical_jobs_on_one_gpu_each_take_twice_as_long() -> None:
    solo = 3600.0
    result = simulate(trace([job("a", solo), job("b", solo)]), SimConfig())
    finish = result.records["finish"].to_numpy()
    assert np.all(np.abs(finish - 2 * solo) <= ROUND + 1e-6)
    # Max-min gives each half the GPU: they alternate, one round each.
    assert result.records["received_v100"].tolist() == pytest.approx([solo, solo])


def test_a_job_that_fits_nowhere_never_starts_and_says_why() -> None:
    jobs = [
        job("too-big", 100.0, gpus=8),
        job("wrong-type", 100.0, speed={"k80": 5.0}),
        job("fine", 100.0),
    ]
    result = simulate(trace(jobs, {"v100": 4}), SimConfig())
    by_id = result.records.set_index("job")
    for name in ("too-big", "wrong-type"):
        assert np.isnan(by_id.loc[name, "first_start"])
        assert not by_id.loc[name, "finished"]
        assert by_id.loc[name, "reason"].startswith("fits nowhere")
    assert by_id.loc["fine", "finished"]
    assert result.summary["fits_nowhere"] == 2
    assert result.summary["never_started"] == 2


def test_every_move_costs_the_preemption_time_and_an_extension_costs_nothing() -> None:
    cost = 60.0
    alone = simulate(trace([job("a", 3600.0)]), SimConfig(preemption_seconds=cost))
    assert alone.records.loc[0, "finish"] == pytest.approx(3600.0)
    assert alone.records.loc[0, "lost_seconds"] == 0.0
    shared = simulate(
        trace([job("a", 3600.0), job("b", 3600.0)]), SimConfig(preemption_seconds=cost)
    )
    jobs = shared.records
    assert (jobs["moves"] > 0).all()
    assert jobs["lost_seconds"].tolist() == pytest.approx((jobs["moves"] * cost).tolist())
    # Work is conserved: what was lost is paid in extra wall time holding the GPU.
    assert (jobs["run_seconds"] - jobs["lost_seconds"]).tolist() == pytest.approx([3600.0] * 2)


def test_space_sharing_runs_a_pair_at_its_co_located_throughputs() -> None:
    """Two jobs on one GPU that keep 80 % of their speed together: sharing all the time beats
    taking turns (each would finish at 2×), so both finish at solo ÷ 0.8."""
    pairs_a = {"B": {"v100": (8.0, 8.0)}}
    pairs_b = {"A": {"v100": (8.0, 8.0)}}
    a = TraceJob("a", 0.0, 1, 36000.0, {"v100": 10.0}, workload_class="A", pairs=pairs_a)
    b = TraceJob("b", 0.0, 1, 36000.0, {"v100": 10.0}, workload_class="B", pairs=pairs_b)
    config = SimConfig(options={"space_sharing": True})
    result = simulate(trace([a, b]), config)
    assert result.records["finish"].tolist() == pytest.approx([3600.0 / 0.8] * 2, abs=1.0)
    # The GPU is held once for the pair, not twice.
    assert (result.timeseries["util_v100"] <= 1.0 + 1e-9).all()


@pytest.mark.parametrize("rule", ["gavel", "deficit"])
@pytest.mark.parametrize("rounds", [100, 400])
def test_received_time_per_type_converges_to_the_allocation(rounds: int, rule: str) -> None:
    """End to end through the engine: with one allocation in force (nothing finishes, so no
    re-solve), every job's time on every type stays within one round of X_jk × elapsed time,
    however long it runs. Three jobs on three types, each split over two or three of them; the
    allocation fills every GPU, so the mechanism has no spare GPUs to give beyond X."""
    speeds = [
        {"v100": 40.0, "p100": 20.0, "k80": 10.0},
        {"v100": 20.0, "p100": 15.0, "k80": 10.0},
        {"v100": 12.0, "p100": 10.0, "k80": 6.0},
    ]
    jobs = [job(f"j{i}", 1e8, speed=s) for i, s in enumerate(speeds)]
    horizon = rounds * ROUND
    config = SimConfig(max_time=horizon, resolve=Resolve(True, True, None), round_rule=rule)
    engine = Engine(trace(jobs, {"v100": 1, "p100": 1, "k80": 1}), config)
    result = engine.run()
    assert result.summary["policy_calls"] == 1
    # The policy's answer reaches the mechanism as its columns, one row per job.
    columns = engine.enactor.allocation  # type: ignore[attr-defined]
    allocation = {job.id: job.allocation for job in columns}
    assert sum(len(per) > 1 for per in allocation.values()) == 3
    for _, row in result.records.iterrows():
        for kind in ("v100", "p100", "k80"):
            target = allocation.get(row["job"], {}).get(kind, 0.0) * horizon
            assert abs(row[f"received_{kind}"] - target) <= ROUND + 1e-6
