"""Space sharing: a pair runs together on the same GPUs, and its time counts for both."""

from __future__ import annotations

import pytest

from apportion.mechanism import PairShare, allocation_of, next_round
from apportion.solver import solve
from tests.mechanism.rounds_checks import ROUND, Replay, assert_valid_round, cluster


def test_a_pair_shares_the_same_gpus() -> None:
    snapshot = cluster({"n0": ("g", 2), "n1": ("g", 2)}, [("a", 2), ("b", 2), ("c", 2)])
    pairs = (PairShare("a", "b", {"g": 1.0}),)
    allocation = {"c": {"g": 1.0}}
    rnd = next_round(snapshot, allocation, {}, pairs=pairs)
    assert_valid_round(rnd, snapshot, allocation, pairs)
    placed = {a.job: (a.placement, a.shared_with) for a in rnd.assignments}
    assert placed["a"][0] == placed["b"][0] and len(placed["a"][0]) == 1
    assert (placed["a"][1], placed["b"][1]) == ("b", "a")
    assert placed["c"][0] != placed["a"][0] and rnd.idle == {"g": 0}


def test_a_pair_and_a_single_job_take_turns() -> None:
    snapshot = cluster({"n0": ("g", 1)}, [("a", 1), ("b", 1), ("c", 1)])
    replay = Replay(snapshot, {"c": {"g": 0.5}}, [PairShare("a", "b", {"g": 0.5})])
    turns = [tuple(sorted(a.job for a in r.assignments)) for r in replay.run(8)]
    assert turns == [("c",), ("a", "b")] * 4  # ties: single jobs before pairs
    # Each member held the GPU in every pair round: the pair's time counts for both.
    assert replay.received["a"] == replay.received["b"] == {"g": 4 * ROUND}
    assert replay.pairs[0].received == {"g": 4 * ROUND}


def test_time_alone_and_time_together_are_served_apart() -> None:
    """a is owed half its time alone and half with b: alone time is received minus together
    time, so neither kind crowds out the other."""
    snapshot = cluster({"n0": ("g", 1)}, [("a", 1), ("b", 1)])
    replay = Replay(snapshot, {"a": {"g": 0.5}}, [PairShare("a", "b", {"g": 0.5})])
    replay.run(10)
    assert replay.pairs[0].received == {"g": 5 * ROUND}
    assert replay.received["a"] == {"g": 10 * ROUND} and replay.received["b"] == {"g": 5 * ROUND}


def test_a_pair_keeps_its_gpus_round_after_round() -> None:
    snapshot = cluster({"n0": ("g", 4), "n1": ("g", 4)}, [("a", 4), ("b", 4)])
    replay = Replay(snapshot, {}, [PairShare("a", "b", {"g": 1.0})])
    first, second, third = replay.run(3)
    assert not any(a.kept for a in first.assignments)
    assert all(a.kept for a in (*second.assignments, *third.assignments))
    assert first.assignments[0].placement == third.assignments[0].placement


def test_a_member_running_alone_keeps_its_partner_waiting() -> None:
    snapshot = cluster({"n0": ("g", 1), "n1": ("g", 1)}, [("a", 1), ("b", 1)])
    pairs = (PairShare("a", "b", {"g": 0.5}, {"g": ROUND}),)
    received = {"a": {"g": ROUND}, "b": {"g": 2 * ROUND}}  # a never ran alone: +∞ alone
    rnd = next_round(snapshot, {"a": {"g": 0.5}}, received, pairs=pairs, elapsed=2 * ROUND)
    assert [(a.job, a.shared_with) for a in rnd.assignments] == [("a", None)]
    assert rnd.waiting == ("b",)
    assert rnd.reasons["b"] == "its pair partner 'a' runs without it"


def test_space_sharing_allocation_from_the_policy_is_enacted() -> None:
    """Two jobs that gain from sharing one GPU: max-min with space sharing pairs them, and
    the round runs them together."""
    snapshot = {
        "nodes": [{"id": "n0", "gpus": 1, "gpu_type": "g"}],
        "jobs": [{"id": "a", "throughput": {"g": 1.0}}, {"id": "b", "throughput": {"g": 1.0}}],
        "job_pairs": [{"a": "a", "b": "b", "throughput": {"g": [0.9, 0.9]}}],
    }
    result = solve(snapshot, policy="max_min_fairness", options={"space_sharing": True})
    allocation, pairs = allocation_of(result)
    assert pairs and pairs[0].allocation["g"] == pytest.approx(1.0)
    from apportion.solver.snapshot import parse_snapshot

    rnd = next_round(parse_snapshot(snapshot), allocation, {}, pairs=pairs)
    assert {(a.job, a.shared_with) for a in rnd.assignments} == {("a", "b"), ("b", "a")}
