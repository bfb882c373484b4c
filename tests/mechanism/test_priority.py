"""Who runs: hand-solved rounds of Gavel's priority rule (priority = X_jk / (g_jk / T))."""

from __future__ import annotations

import math

import pytest

from apportion.mechanism import next_round
from tests.mechanism.rounds_checks import ROUND, Replay, assert_valid_round, cluster

GAVEL_NODES = {"v": ("v100", 1), "p": ("p100", 1), "k": ("k80", 1)}
# The talk's example (Gavel, OSDI'20 Fig. 6): allocation X and rounds received per type.
GAVEL_X = {
    "job0": {"v100": 0.6, "p100": 0.4},
    "job1": {"v100": 0.2, "p100": 0.6, "k80": 0.2},
    "job2": {"v100": 0.2, "k80": 0.8},
}
GAVEL_ROUNDS = {
    "job0": {"v100": 3, "p100": 1},
    "job1": {"v100": 1, "p100": 3},
    "job2": {"k80": 4},
}


def test_two_jobs_with_half_a_gpu_each_alternate() -> None:
    snapshot = cluster({"n0": ("g", 1)}, [("a", 1), ("b", 1)])
    replay = Replay(snapshot, {"a": {"g": 0.5}, "b": {"g": 0.5}})
    runs = [r.assignments[0].job for r in replay.run(10)]
    assert runs == ["a", "b"] * 5
    assert replay.lag("a", "g") == 0 and replay.lag("b", "g") == 0


def test_gavel_example_job0_gets_the_p100_next() -> None:
    """Job 0 is allocated 0.6 V100 / 0.4 P100 and has received 75 % of its time on the V100:
    priorities 0.6 / 0.75 = 0.8 on the V100 and 0.4 / 0.25 = 1.6 on the P100."""
    snapshot = cluster(GAVEL_NODES, [("job0", 1)])
    received = {"job0": {"v100": 3 * ROUND, "p100": 1 * ROUND}}
    rnd = next_round(snapshot, {"job0": GAVEL_X["job0"]}, received)
    (only,) = rnd.assignments
    assert (only.job, only.gpu_type, only.placement) == ("job0", "p100", {"p": 1})
    assert only.priority == pytest.approx(1.6)
    assert rnd.idle == {"k80": 1, "p100": 0, "v100": 1}


def test_gavel_example_whole_round() -> None:
    """The talk's next round: job 0 on the P100, job 1 on the K80, job 2 on the V100 (jobs 1
    and 2 have never run on those types: infinite priority)."""
    snapshot = cluster(GAVEL_NODES, [("job0", 1), ("job1", 1), ("job2", 1)])
    received = {j: {k: r * ROUND for k, r in per.items()} for j, per in GAVEL_ROUNDS.items()}
    rnd = next_round(snapshot, GAVEL_X, received)
    assert_valid_round(rnd, snapshot, GAVEL_X)
    got = {a.job: (a.gpu_type, a.priority) for a in rnd.assignments}
    assert got == {
        "job1": ("k80", math.inf),
        "job2": ("v100", math.inf),
        "job0": ("p100", pytest.approx(1.6)),
    }
    assert [a.job for a in rnd.assignments] == ["job1", "job2", "job0"]  # priority order
    assert rnd.elapsed == 4 * ROUND and rnd.waiting == ()


def test_priority_is_share_over_fraction_of_elapsed_time() -> None:
    snapshot = cluster({"n0": ("g", 1)}, [("a", 1)])
    rnd = next_round(snapshot, {"a": {"g": 0.5}}, {"a": {"g": 720.0}}, elapsed=3600.0)
    assert rnd.assignments[0].priority == pytest.approx(0.5 / (720 / 3600))
    assert rnd.elapsed == 3600.0


def test_default_elapsed_is_what_the_received_times_imply() -> None:
    """No job ran every round, but the one GPU was busy all three rounds: T = 3 rounds."""
    snapshot = cluster({"n0": ("g", 1)}, [("a", 1), ("b", 1), ("c", 1)])
    received = {"a": {"g": ROUND}, "b": {"g": ROUND}, "c": {"g": ROUND}}
    allocation = {j: {"g": 1 / 3} for j in "abc"}
    rnd = next_round(snapshot, allocation, received)
    assert rnd.elapsed == 3 * ROUND
    assert rnd.assignments[0].priority == pytest.approx(1.0)


def test_a_job_without_time_does_not_run_even_on_idle_gpus() -> None:
    snapshot = cluster({"n0": ("g", 4)}, [("a", 1), ("b", 1), ("c", 1)])
    rnd = next_round(snapshot, {"a": {"g": 0.5}, "b": {"g": 0.0}}, {})
    assert [a.job for a in rnd.assignments] == ["a"]
    assert rnd.idle == {"g": 3} and rnd.waiting == ()


def test_a_type_without_time_is_never_used() -> None:
    snapshot = cluster({"v": ("v100", 1), "k": ("k80", 1)}, [("a", 1), ("b", 1)])
    rnd = next_round(snapshot, {"a": {"v100": 1.0}, "b": {"v100": 0.5}}, {"a": {"v100": ROUND}})
    assert [(a.job, a.gpu_type) for a in rnd.assignments] == [("b", "v100")]
    assert rnd.waiting == ("a",) and rnd.idle == {"k80": 1, "v100": 0}


def test_ties_go_to_the_larger_share_then_to_job_order() -> None:
    snapshot = cluster({"n0": ("g", 1)}, [("a", 1), ("b", 1), ("c", 1)])
    allocation = {"a": {"g": 0.25}, "b": {"g": 0.25}, "c": {"g": 0.5}}
    first = next_round(snapshot, allocation, {})
    assert first.assignments[0].job == "c"  # all +∞: the larger share first
    again = next_round(snapshot, {"a": {"g": 0.5}, "b": {"g": 0.5}}, {})
    assert again.assignments[0].job == "a"  # equal in everything: snapshot order
    assert again == next_round(snapshot, {"a": {"g": 0.5}, "b": {"g": 0.5}}, {})


def test_a_gang_that_does_not_fit_lets_a_smaller_job_run() -> None:
    snapshot = cluster({"n0": ("g", 3)}, [("a", 2), ("b", 2), ("c", 1)])
    allocation = {"a": {"g": 1.0}, "b": {"g": 0.5}, "c": {"g": 0.5}}
    rnd = next_round(snapshot, allocation, {})
    assert [a.job for a in rnd.assignments] == ["a", "c"]
    assert rnd.waiting == ("b",)
    assert rnd.reasons["b"] == "only 1 'g' GPU was left for its gang of 2"


def test_a_gang_larger_than_its_type_waits_and_says_why() -> None:
    snapshot = cluster({"n0": ("g", 2), "n1": ("g", 1)}, [("big", 4)])
    rnd = next_round(snapshot, {"big": {"g": 1.0}}, {})
    assert rnd.assignments == () and rnd.waiting == ("big",)
    assert rnd.reasons["big"] == "needs 4 GPUs at once; the nodes of 'g' hold 3"


def test_a_job_refused_on_one_type_runs_on_another() -> None:
    snapshot = cluster({"v": ("v100", 1), "k": ("k80", 1)}, [("a", 1), ("b", 1)])
    allocation = {"a": {"v100": 1.0}, "b": {"v100": 0.5, "k80": 0.5}}
    received = {"a": {"v100": ROUND}, "b": {"k80": ROUND}}
    rnd = next_round(snapshot, allocation, received)
    # b's V100 entry (+∞: never ran there) beats a's; a waits, b's K80 entry is not needed.
    assert [(a.job, a.gpu_type) for a in rnd.assignments] == [("b", "v100")]
    assert rnd.reasons == {"a": "every 'v100' GPU went to higher-priority jobs"}
    received = {"a": {"v100": ROUND}, "b": {"v100": ROUND}}
    rnd = next_round(snapshot, allocation, received)
    assert [(a.job, a.gpu_type) for a in rnd.assignments] == [("b", "k80"), ("a", "v100")]


def test_a_full_cluster_leaves_the_rest_waiting_with_a_reason() -> None:
    snapshot = cluster({"n0": ("g", 1)}, [("a", 1), ("b", 1), ("c", 1)])
    rnd = next_round(snapshot, {j: {"g": 1 / 3} for j in "abc"}, {})
    assert rnd.waiting == ("b", "c")
    assert set(rnd.reasons.values()) == {"the cluster's GPUs all went to higher-priority jobs"}


def test_solver_round_off_is_not_time_to_serve() -> None:
    snapshot = cluster({"n0": ("g", 2)}, [("a", 1), ("b", 1)])
    rnd = next_round(snapshot, {"a": {"g": 1e-12}, "b": {"g": 1.0}}, {})
    assert [a.job for a in rnd.assignments] == ["b"] and rnd.waiting == ()
