"""Leases mode (Chronus): admission lease by lease, guarantees carried over and kept."""

from __future__ import annotations

import pytest

from apportion.simulator.config import SimConfig
from apportion.simulator.engine import simulate
from apportion.simulator.trace import Deadline
from tests.simulator.helpers import job, trace

LEASE = 600.0
CLUSTER = {"gpu": 16}  # two nodes of 8


def _run(jobs: list, **settings: object) -> object:
    config = SimConfig(policy="deadline_admission", lease_seconds=LEASE, **settings)  # type: ignore[arg-type]
    return simulate(trace(jobs, CLUSTER, per_node=8), config)


def test_a_guaranteed_job_meets_its_deadline_on_a_busy_cluster() -> None:
    speed = {"gpu": 1.0}
    slo = job("slo", 2400.0, gpus=8, speed=speed, deadlines=[Deadline(3600.0, 10.0)])
    crowd = [job(f"be-{i}", 7200.0, gpus=8, speed=speed, job_class="best_effort") for i in range(4)]
    result = _run([slo, *crowd])
    row = result.records.set_index("job").loc["slo"]  # type: ignore[attr-defined]
    assert row["guaranteed"]
    assert row["finish"] <= 3600.0
    assert row["deadline_met"]
    assert row["value_earned"] == 10.0
    summary = result.summary  # type: ignore[attr-defined]
    assert summary["deadline_met_fraction"] == 1.0
    assert summary["finished"] == 5
    assert summary["best_effort_jct_mean"] is not None


def test_an_impossible_deadline_is_not_guaranteed_and_earns_nothing() -> None:
    speed = {"gpu": 1.0}
    hopeless = job("hopeless", 3000.0, gpus=8, speed=speed, deadlines=[Deadline(1200.0, 10.0)])
    result = _run([hopeless])
    row = result.records.iloc[0]  # type: ignore[attr-defined]
    assert not row["guaranteed"]
    assert not row["deadline_met"]
    assert row["value_earned"] == 0.0
    assert row["finished"]  # still runs, as best-effort work


def test_jobs_run_lease_by_lease_and_pay_the_checkpoint_cost_on_moves() -> None:
    speed = {"gpu": 1.0}
    jobs = [job(f"j{i}", 1800.0, gpus=4, speed=speed) for i in range(3)]
    result = _run(jobs, preemption_seconds=30.0)
    records = result.records  # type: ignore[attr-defined]
    assert records["finished"].all()
    # A lease boundary is the earliest a job can start or finish being charged: whole leases.
    assert (records["first_start"] % LEASE == 0).all()
    assert records["lost_seconds"].tolist() == pytest.approx((records["moves"] * 30.0).tolist())
