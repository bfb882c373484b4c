"""Serving orders and back-fill, hand-solved: one queue by priority, Gavel's queue per GPU type
(fastest type first, priority-0 entries at the end of each), and jobs an allocation does not
cover running on what it leaves free."""

from __future__ import annotations

import pytest

from apportion.mechanism import Order, Planner, next_round
from apportion.mechanism.arrays import Spare
from apportion.solver.errors import InputError
from apportion.solver.snapshot import Snapshot, parse_snapshot

SPEED = {"v100": 3.0, "p100": 2.0, "k80": 1.0}


def snapshot(jobs: dict[str, int], types: tuple[str, ...] = ("k80", "p100", "v100")) -> Snapshot:
    """One node of one GPU per type (listed slowest first: the per-type order must come from
    the throughputs, not the listing); jobs (id → scale factor) at SPEED."""
    return parse_snapshot(
        {
            "gpu_types": [{"name": t, "count": 1} for t in types],
            "nodes": [{"id": t[0], "gpus": 1, "gpu_type": t} for t in types],
            "jobs": [
                {"id": j, "scale_factor": s, "throughput": {t: SPEED[t] for t in types}}
                for j, s in jobs.items()
            ],
        }
    )


def test_per_type_queues_put_a_job_behind_on_both_types_on_the_fast_one() -> None:
    # X = ½ V100, ½ K80 for both; T = 2,160 s. Priorities T·X/g: a's K80 6 (180 s received),
    # a's V100 3 (360 s), b's V100 1.5 (720 s), b's K80 0.75 (1,440 s). One queue serves a's
    # K80 entry first, then b's V100 one; per type, the V100 queue serves a first (its best
    # there), then the K80 queue b.
    cluster = snapshot({"a": 1, "b": 1}, types=("k80", "v100"))
    allocation = {j: {"v100": 0.5, "k80": 0.5} for j in "ab"}
    received = {"a": {"v100": 360.0, "k80": 180.0}, "b": {"v100": 720.0, "k80": 1440.0}}
    one = next_round(cluster, allocation, received, elapsed=2160.0)
    assert {a.job: a.gpu_type for a in one.assignments} == {"a": "k80", "b": "v100"}
    per_type = next_round(cluster, allocation, received, elapsed=2160.0, order=Order.TYPES)
    assert {a.job: (a.gpu_type, a.priority) for a in per_type.assignments} == {
        "a": ("v100", pytest.approx(3.0)),
        "b": ("k80", pytest.approx(0.75)),
    }


def test_left_over_gpus_go_to_jobs_that_move_up_not_to_jobs_given_nothing() -> None:
    # a has all its time on the P100, b on the K80, c nothing. One queue: a on the P100, b on
    # the K80, the V100 idle. Per type: the V100's queue has no entry with time, so at priority
    # 0 it serves a (the V100 is faster than a's P100), the P100's serves b (faster than its
    # K80), and the K80 stays idle: c was given nothing, so it does not run.
    cluster = snapshot({"a": 1, "b": 1, "c": 1})
    allocation = {"a": {"p100": 1.0}, "b": {"k80": 1.0}}
    one = next_round(cluster, allocation, {})
    assert {a.job: a.gpu_type for a in one.assignments} == {"a": "p100", "b": "k80"}
    assert one.idle == {"k80": 0, "p100": 0, "v100": 1}
    per_type = next_round(cluster, allocation, {}, order=Order.TYPES)
    assert {a.job: (a.gpu_type, a.priority) for a in per_type.assignments} == {
        "a": ("v100", 0.0),
        "b": ("p100", 0.0),
    }
    assert per_type.idle == {"k80": 1, "p100": 0, "v100": 0}


def test_a_job_never_moves_down_to_a_slower_type_than_it_was_given() -> None:
    # a has time on the V100 only and another job holds it: the P100 and K80 stay idle.
    cluster = snapshot({"a": 1, "b": 1})
    allocation = {"a": {"v100": 0.5}, "b": {"v100": 0.5}}
    rnd = next_round(cluster, allocation, {"a": {"v100": 360.0}}, order=Order.TYPES)
    assert {a.job: a.gpu_type for a in rnd.assignments} == {"b": "v100"}
    assert rnd.waiting == ("a",)


def test_jobs_the_allocation_does_not_cover_fill_what_it_leaves_free() -> None:
    # "old" has half of the V100; "new" arrived since the allocation and "gave" was given
    # nothing. Back-filled, "new" runs on the fastest type with room, at priority 0, after
    # every entry with time; "gave" never runs. A gang too wide for what is left waits.
    cluster = snapshot({"old": 1, "new": 1, "gave": 1, "wide": 2})
    uncovered = ["wide", "new", "old"]
    planner = Planner(cluster, {"old": {"v100": 0.5}}, uncovered=uncovered, backfill=True)
    rnd = planner.next_round({})
    assert [(a.job, a.gpu_type, a.priority) for a in rnd.assignments] == [
        ("old", "v100", float("inf")),
        ("new", "p100", 0.0),
    ]
    assert rnd.idle == {"k80": 1, "p100": 0, "v100": 0}
    assert rnd.waiting == ()  # none of them has time allocated
    alone = Planner(cluster, {"old": {"v100": 0.5}}).next_round({})
    assert [a.job for a in alone.assignments] == ["old"]


def test_gavels_simulator_serves_every_covered_job_where_it_has_no_time() -> None:
    # "a" has the V100, "b" the V100 too but is behind "a" (received more); "c" was given
    # nothing; "new" arrived since. Per type, fastest first: the V100 serves "a" (∞), then its
    # priority-0 entries are all taken; the P100's priority-0 entries in job order: "b" moves
    # down to it, then "c" runs on the K80. "new" runs nowhere, though the cluster had room
    # for it had "c" not come first.
    cluster = snapshot({"a": 1, "b": 1, "c": 1, "new": 1})
    allocation = {"a": {"v100": 0.5}, "b": {"v100": 0.5}, "c": {"v100": 0.0}}
    planner = Planner(cluster, allocation, uncovered=["new"], spare=Spare.ANY, order=Order.TYPES)
    rnd = planner.next_round({"b": {"v100": 360.0}})
    assert {a.job: (a.gpu_type, a.priority) for a in rnd.assignments} == {
        "a": ("v100", float("inf")),
        "b": ("p100", 0.0),
        "c": ("k80", 0.0),
    }
    # Under its FIFO policies nothing runs at priority 0: "b" waits, P100 and K80 idle.
    fifo = Planner(cluster, allocation, uncovered=["new"], spare=Spare.NONE, order=Order.TYPES)
    rnd = fifo.next_round({"b": {"v100": 360.0}})
    assert [a.job for a in rnd.assignments] == ["a"]
    assert rnd.idle == {"k80": 1, "p100": 1, "v100": 0}


def test_an_unknown_order_is_an_input_error() -> None:
    with pytest.raises(InputError) as info:
        next_round(snapshot({"a": 1}), {"a": {"v100": 1.0}}, {}, order="fastest")
    assert info.value.errors[0].loc == ("order",)
