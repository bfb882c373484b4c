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


# ---- admission on arrival, GPUs lent at once, the call interval, overheads ------------------


def _records(jobs: list, **settings: object) -> object:
    return _run(jobs, **settings).records.set_index("job")  # type: ignore[attr-defined]


def test_a_job_arriving_mid_lease_is_admitted_and_started_on_arrival() -> None:
    # busy fills one node (8 GPUs) from 0; slo arrives at 100 s into the 600 s lease, needs 8
    # GPUs for 900 s by 1,500 s: the other node is free, so it starts at once (a lease
    # boundary would be too late: 600 + 900 > 1,500).
    speed = {"gpu": 1.0}
    busy = job("busy", 3000.0, gpus=8, speed=speed, job_class="best_effort")
    slo = job("slo", 900.0, arrival=100.0, gpus=8, speed=speed, deadlines=[Deadline(1500.0)])
    row = _records([busy, slo]).loc["slo"]  # type: ignore[attr-defined]
    assert row["first_start"] == 100.0 and row["guaranteed"] and row["deadline_met"]


def test_gpus_freed_in_the_middle_of_a_lease_are_lent_at_once() -> None:
    # short (16 GPUs, 200 s) ends at 200 s into the first lease; waiting starts then, not at
    # the boundary (600 s).
    speed = {"gpu": 1.0}
    short = job("short", 200.0, gpus=16, speed=speed, job_class="best_effort")
    waiting = job("waiting", 400.0, arrival=10.0, gpus=16, speed=speed, job_class="best_effort")
    rows = _records([short, waiting])
    assert rows.loc["waiting", "first_start"] == pytest.approx(200.0)  # type: ignore[attr-defined]


def test_called_every_few_minutes_arrivals_wait_for_the_next_call() -> None:
    speed = {"gpu": 1.0}
    late = job("late", 300.0, arrival=10.0, gpus=8, speed=speed, job_class="best_effort")
    first = job("first", 300.0, gpus=8, speed=speed, job_class="best_effort")
    rows = _records([first, late], call_seconds=150.0)
    assert rows.loc["late", "first_start"] == 150.0  # type: ignore[attr-defined]


def test_chronus_overhead_is_paid_at_every_start_the_first_included() -> None:
    # A 4-GPU job alone: 30 + 30 · log2 4 = 90 s before any progress, then 1,000 s of work.
    speed = {"gpu": 1.0}
    solo = job("solo", 1000.0, gpus=4, speed=speed, job_class="best_effort")
    chronus = _records([solo], overhead_model="chronus").loc["solo"]  # type: ignore[attr-defined]
    assert chronus["finish"] == pytest.approx(1090.0) and chronus["lost_seconds"] == 90.0
    fixed = _records([solo], preemption_seconds=50.0).loc["solo"]  # type: ignore[attr-defined]
    assert fixed["finish"] == pytest.approx(1000.0)  # the fixed model: first starts are free


@pytest.mark.parametrize("policy", ["srtf", "edf"])
def test_baselines_under_leases_keep_their_gpus_and_pay_only_for_real_moves(policy: str) -> None:
    # Two 8-GPU jobs run lease after lease on the same nodes: no move, no overhead after the
    # first start; a third (longer) arriving mid-lease waits for GPUs nobody holds.
    speed = {"gpu": 1.0}
    jobs = [job(f"j{i}", 1500.0, gpus=8, speed=speed, job_class="best_effort") for i in range(2)]
    jobs.append(job("mid", 5000.0, arrival=300.0, gpus=8, speed=speed, job_class="best_effort"))
    result = simulate(
        trace(jobs, CLUSTER, per_node=8),
        SimConfig(policy=policy, mode="leases", lease_seconds=LEASE, overhead_model="chronus"),
    )
    rows = result.records.set_index("job")
    assert rows.loc["j0", "moves"] == 0 and rows.loc["j1", "moves"] == 0
    assert rows.loc["mid", "first_start"] >= LEASE  # nobody is preempted mid-lease
    assert rows.loc["j0", "lost_seconds"] == pytest.approx(30.0 + 30.0 * 3)


def test_a_job_the_price_declines_is_met_when_it_runs_at_its_last_chance() -> None:
    # One node, 10-minute leases. long: 8 GPUs for 1,800 s, due at 2,500 s; eight 1-GPU SLO
    # jobs of 1,200 s due in 3 hours. 16 GPUs asked of 8: long's guarantee (8 GPUs × 3 leases
    # at 0.05 of its value each) is worth less than it costs and is declined; the small jobs
    # are guaranteed, their leases packed late. At 0 long can wait one lease (slack 700 s), so
    # the small jobs are lent the node, shortest first. At 600 s it must start or miss: it
    # runs first (nothing else is due before it), ends at 2,400 s and meets its deadline (with
    # two leases left its guarantee is worth its price, and it gets one). Shortest remaining
    # time first alone would run the small jobs on until 1,200 s and long would end at 3,000 s.
    speed = {"gpu": 1.0}
    long = job("long", 1800.0, gpus=8, speed=speed, deadlines=[Deadline(2500.0, 10.0)])
    small = [
        job(f"s{i}", 1200.0, gpus=1, speed=speed, deadlines=[Deadline(10800.0, 10.0)])
        for i in range(8)
    ]
    result = simulate(
        trace([long, *small], {"gpu": 8}, per_node=8),
        SimConfig(policy="deadline_admission", lease_seconds=LEASE),
    )
    records = result.records.set_index("job")
    assert records.loc["long", "first_start"] == LEASE
    assert records.loc["long", "finish"] == pytest.approx(2400.0)
    assert records["deadline_met"].all()
    assert result.summary["guarantees_broken"] == 0
