"""Time on a type where a job makes no progress is never enacted (Gavel gives such entries
priority 0 and skips them): hand-solved rounds on snapshots whose jobs lack a throughput on
some type, alone and in pairs."""

from __future__ import annotations

from typing import Any

from apportion.mechanism import Order, PairShare, Planner, next_round
from apportion.solver.snapshot import Snapshot, parse_snapshot
from tests.mechanism.rounds_checks import ROUND


def snapshot(
    jobs: dict[str, dict[str, float]], pairs: list[dict[str, Any]] | None = None
) -> Snapshot:
    """One K80 node and one V100 node of one GPU each (K80 listed first, so that in the tie
    order a K80 entry comes before a V100 one); jobs with the given throughputs."""
    return parse_snapshot(
        {
            "gpu_types": [{"name": "k80", "count": 1}, {"name": "v100", "count": 1}],
            "nodes": [
                {"id": "k0", "gpus": 1, "gpu_type": "k80"},
                {"id": "v0", "gpus": 1, "gpu_type": "v100"},
            ],
            "jobs": [{"id": j, "throughput": t} for j, t in jobs.items()],
            "job_pairs": pairs or [],
        }
    )


def test_time_on_a_type_without_throughput_is_never_served() -> None:
    # a has half its time on the K80 where it has no throughput, half on the V100; b half on
    # the K80. Every entry starts at +∞, ties go to the earlier job and type: served, a's K80
    # entry would come first and take the K80 from b. It is dropped: a on the V100, b on the
    # K80, every round.
    cluster = snapshot({"a": {"v100": 1.0}, "b": {"k80": 1.0, "v100": 1.0}})
    allocation = {"a": {"k80": 0.5, "v100": 0.5}, "b": {"k80": 0.5}}
    planner = Planner(cluster, allocation, round_seconds=ROUND)
    received: dict[str, dict[str, float]] = {}
    for _ in range(6):
        rnd = planner.next_round(received)
        assert {a.job: a.gpu_type for a in rnd.assignments} == {"a": "v100", "b": "k80"}
        assert rnd.waiting == ()
        for a in rnd.assignments:
            per = received.setdefault(a.job, {})
            per[a.gpu_type] = per.get(a.gpu_type, 0.0) + ROUND


def test_a_job_whose_time_is_all_where_it_makes_no_progress_waits_and_says_why() -> None:
    cluster = snapshot({"a": {"v100": 1.0}})
    rnd = next_round(cluster, {"a": {"k80": 1.0}}, {})
    assert rnd.assignments == ()
    assert rnd.waiting == ("a",)
    assert "'k80'" in rnd.reasons["a"] and "no progress" in rnd.reasons["a"]
    assert rnd.idle == {"k80": 1, "v100": 1}


def test_under_per_type_queues_such_a_job_runs_where_it_progresses() -> None:
    # Gavel's queues end with priority-0 entries: a's time is all on the K80, where it makes
    # no progress, so the V100's queue offers it that GPU.
    cluster = snapshot({"a": {"v100": 1.0}})
    rnd = next_round(cluster, {"a": {"k80": 1.0}}, {}, order=Order.TYPES)
    (only,) = rnd.assignments
    assert (only.job, only.gpu_type, only.priority) == ("a", "v100", 0.0)
    assert rnd.idle == {"k80": 1, "v100": 0}
    assert rnd.waiting == () and rnd.reasons == {}


def test_a_pair_runs_only_where_both_members_progress_together() -> None:
    # The snapshot lists a and b as co-locatable on the V100 only: the pair's K80 time is not
    # served, its V100 time is.
    pairs = [{"a": "a", "b": "b", "throughput": {"v100": [0.8, 0.8]}}]
    speeds = {"k80": 1.0, "v100": 1.0}
    cluster = snapshot({"a": speeds, "b": speeds}, pairs)
    on_k80 = next_round(cluster, {}, {}, pairs=[PairShare("a", "b", {"k80": 1.0})])
    assert on_k80.assignments == ()
    on_v100 = next_round(cluster, {}, {}, pairs=[PairShare("a", "b", {"v100": 1.0})])
    assert {(a.job, a.gpu_type, a.shared_with) for a in on_v100.assignments} == {
        ("a", "v100", "b"),
        ("b", "v100", "a"),
    }


def test_a_pair_the_snapshot_does_not_list_needs_both_members_to_run_there() -> None:
    cluster = snapshot({"a": {"k80": 1.0, "v100": 1.0}, "b": {"v100": 1.0}})
    rnd = next_round(cluster, {}, {}, pairs=[PairShare("a", "b", {"k80": 0.5, "v100": 0.5})])
    assert {a.gpu_type for a in rnd.assignments} == {"v100"}
