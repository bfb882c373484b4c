"""Over many rounds, every job's time on every GPU type follows its allocation X.

Gavel's rule serves the (job, type) entries with the smallest g/X first, which equalizes g/X
among the entries that run, so each job's time on each type grows like its share. It is a
greedy rule, one round at a time, so it does not hold every job within one round of X:

* a job owed every round (X = 1) cannot recover a round lost to the +∞ priorities of jobs
  starting at the same time, and a job refused on its most-owed type runs where it is owed
  less (work-conserving), shifting time between types;
* jobs with spare time (Σ_k X_jk < 1) fill GPUs the others leave idle, so they may get more
  than X on a type, never less by more than the bounds below.

The bounds asserted are those these generators meet with a margin (measured maxima in the
comments); the hand-solved cases in test_priority are exact. The deficit rule, which serves the
entries furthest behind in seconds, holds one-GPU jobs on one GPU type within one round of
their share: that bound is asserted exactly. On several types it keeps no bound: a job owed on
two types at once runs on one, and a greedy choice of types can leave a GPU idle while a job
that must run every round waits (both shown below, with the rule's per-round invariant).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from apportion.mechanism import Rule, next_round
from apportion.refdata.synthetic import busy_round
from apportion.solver import solve
from apportion.solver.snapshot import parse_snapshot
from tests.mechanism.rounds_checks import ROUND, Replay, allocation_of_result

TYPES = ("v100", "p100", "k80")
ROUNDS = 100

#: Max-min fairness here leaves j5 owed on both types at once (see the test below).
TWO_TYPES_OWED: dict[str, Any] = {
    "nodes": [
        {"id": "v100-0", "gpus": 1, "gpu_type": "v100"},
        {"id": "p100-0", "gpus": 4, "gpu_type": "p100"},
    ],
    "jobs": [
        {"id": "j0", "throughput": {}},
        {"id": "j1", "throughput": {"v100": 1.0}},
        {"id": "j2", "throughput": {"p100": 1.0}},
        {"id": "j3", "throughput": {"v100": 1.0}},
        {"id": "j4", "throughput": {"p100": 1.0}},
        {"id": "j5", "throughput": {"v100": 4.0, "p100": 1.75}},
        {"id": "j6", "throughput": {}},
        {"id": "j7", "throughput": {"p100": 1.0}},
        {"id": "j8", "throughput": {"p100": 1.0}},
    ],
}

#: The furthest behind of 600 examples of `heterogeneous` under the deficit rule: 2.11 rounds.
TWO_ROUNDS_BEHIND: dict[str, Any] = {
    "nodes": [{"id": f"{k}-0", "gpus": 2, "gpu_type": k} for k in TYPES],
    "jobs": [
        {"id": "j0", "throughput": {}},
        {"id": "j1", "throughput": {}},
        {"id": "j2", "throughput": {"v100": 4.574038480617769, "p100": 1.6307894770051838}},
        {"id": "j3", "throughput": {"v100": 4.574038480617769, "k80": 1.4508530171445007}},
        {"id": "j4", "throughput": {"p100": 0.9436923857698768}},
        {"id": "j5", "throughput": {"p100": 2.790321069175018, "k80": 5.0}},
        {"id": "j6", "throughput": {"k80": 4.140312338317008}},
        {"id": "j7", "throughput": {"v100": 1.7203497865553166, "k80": 3.8319027634188867}},
        {"id": "j8", "throughput": {"v100": 3.654284125278233, "p100": 2.333742113146207}},
    ],
}


@st.composite
def homogeneous(draw: st.DrawFn) -> dict[str, Any]:
    nodes = [
        {"id": f"n{i}", "gpus": draw(st.sampled_from([1, 2, 4])), "gpu_type": "g"}
        for i in range(draw(st.integers(1, 3)))
    ]
    jobs = [
        {"id": f"j{i}", "weight": float(draw(st.integers(1, 3))), "throughput": {"g": 1.0}}
        for i in range(draw(st.integers(1, 12)))
    ]
    return {"nodes": nodes, "jobs": jobs}


@st.composite
def heterogeneous(draw: st.DrawFn) -> dict[str, Any]:
    kinds = TYPES[: draw(st.integers(1, 3))]
    nodes = [
        {"id": f"{k}-{i}", "gpus": draw(st.sampled_from([1, 2, 4])), "gpu_type": k}
        for k in kinds
        for i in range(draw(st.integers(1, 2)))
    ]
    speed = st.floats(0.5, 5.0, allow_nan=False)
    jobs = [
        {"id": f"j{i}", "throughput": {k: draw(speed) for k in kinds if draw(st.booleans())}}
        for i in range(draw(st.integers(1, 10)))
    ]
    return {"nodes": nodes, "jobs": jobs}


def _replay(document: dict[str, Any], policy: str, rule: Rule = Rule.GAVEL) -> Replay:
    snapshot = parse_snapshot(document)
    allocation = allocation_of_result(solve(snapshot, policy=policy))
    return Replay(snapshot, allocation, rule=rule)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(homogeneous())
def test_one_gpu_type_tracks_every_share_within_two_rounds(document: dict[str, Any]) -> None:
    """Leximin max-min fairness (water filling) with weights on one GPU type: every job stays
    within 2 rounds of n·X_j, ahead or behind, at every round (measured over 300 random
    examples: 1.65)."""
    replay = _replay(document, "water_filling")
    for _ in range(ROUNDS):
        replay.step()
        worst = max(abs(replay.lag(j, "g")) for j in replay.allocation)
        assert worst <= 2.0, f"round {replay.rounds}: {worst:.2f} rounds off"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(heterogeneous())
def test_no_job_falls_behind_its_share_on_any_type(document: dict[str, Any]) -> None:
    """Max-min fairness on heterogeneous nodes: no job is ever more than 4 rounds behind
    n·X_jk on any type, nor more than 3 behind n·Σ_k X_jk in total (measured over 300
    random examples: 2.54 and 2.09, both in the first rounds, while +∞ priorities last)."""
    replay = _replay(document, "max_min_fairness")
    for _ in range(ROUNDS):
        replay.step()
        for job, per_type in replay.allocation.items():
            behind = max(replay.lag(job, k) for k in per_type)
            assert behind <= 4.0, f"round {replay.rounds}: {job} {behind:.2f} rounds behind"
            total = sum(replay.lag(job, k) for k in TYPES)
            assert total <= 3.0, f"round {replay.rounds}: {job} {total:.2f} rounds short"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(homogeneous())
def test_deficit_rule_keeps_every_share_within_one_round(document: dict[str, Any]) -> None:
    """The deficit rule on one GPU type: every job within one round of n·X_j, ahead or behind,
    at every round."""
    replay = _replay(document, "water_filling", Rule.DEFICIT)
    for _ in range(ROUNDS):
        replay.step()
        worst = max(abs(replay.lag(j, "g")) for j in replay.allocation)
        assert worst <= 1.0 + 1e-9, f"round {replay.rounds}: {worst:.3f} rounds off"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(heterogeneous())
@example(TWO_TYPES_OWED)
@example(TWO_ROUNDS_BEHIND)
def test_deficit_rule_refuses_an_entry_only_for_entries_at_least_as_far_behind(
    document: dict[str, Any],
) -> None:
    """What the deficit rule does keep on heterogeneous nodes, round by round: an entry with
    time that does not run found its type full of entries served at priorities at least its
    own, or its job already running on an entry served at a priority at least its own. It is
    greedy, one round at a time, and that is all it keeps: no bound on the lag follows (the
    two tests below)."""
    replay = _replay(document, "max_min_fairness", Rule.DEFICIT)
    for _ in range(ROUNDS):
        got = {j: dict(per) for j, per in replay.received.items()}
        rnd = replay.step()
        for job, per_type in replay.allocation.items():
            ran = rnd.assignment(job)
            for kind, share in per_type.items():
                if ran is not None and ran.gpu_type == kind:
                    continue
                mine = share * (rnd.elapsed + ROUND) - got.get(job, {}).get(kind, 0.0) - 1e-6
                there = [a.priority for a in rnd.assignments if a.gpu_type == kind]
                full = rnd.idle[kind] == 0 and min(there) >= mine
                assert full or (ran is not None and ran.priority >= mine), (replay.rounds, job)


def test_a_job_owed_on_two_types_at_once_falls_more_than_a_round_behind() -> None:
    """Max-min fairness on 1 V100 + 4 P100 (found by the property test above at 200 examples):
    j5 is owed 0.53 of the V100 and 0.26 of the P100. It waits rounds 2 and 3 behind entries
    further behind (the P100 jobs owed 0.94 each, then j1 and j3 on the V100), so entering
    round 4 it would end 1.13 rounds behind on the V100 and 1.02 on the P100 unserved. A job
    runs on one type per round: whichever it gets, it ends the round more than a round behind
    on the other, under any rule that serves from that state."""
    replay = _replay(TWO_TYPES_OWED, "max_min_fairness", Rule.DEFICIT)
    replay.run(3)
    owed = {k: replay.lag("j5", k) + share for k, share in replay.allocation["j5"].items()}
    assert min(owed.values()) > 1.0, owed
    rnd = replay.step()
    assert rnd.assignment("j5").gpu_type == "v100"  # type: ignore[union-attr]
    assert replay.lag("j5", "p100") == pytest.approx(owed["p100"])
    assert replay.lag("j5", "p100") > 1.0


def test_on_heterogeneous_nodes_a_lag_can_grow_without_bound() -> None:
    """Four one-GPU jobs on GPUs of three types (1 + 1 + 2), each owed a whole GPU's time
    (Σ_k X_jk = 1, within 0.0006): they must all run every round, and some assignment of the
    four to the four GPUs always exists (every job has time on two of the types; e.g. j0 on
    `a`, j2 on `b`, j1 and j3 on `c`). Serving entries greedily by priority sometimes picks a
    type that leaves a job nowhere to run while a GPU of another type idles, and the round it
    loses is never repaid: the lags grow with the number of rounds (Gavel's rule alike)."""
    snapshot = parse_snapshot(
        {
            "nodes": [
                {"id": k, "gpus": g, "gpu_type": k} for k, g in (("a", 1), ("b", 1), ("c", 2))
            ],
            "jobs": [{"id": f"j{i}", "throughput": dict.fromkeys("abc", 1.0)} for i in range(4)],
        }
    )
    allocation = {
        "j0": {"a": 0.2568, "c": 0.7432},
        "j1": {"b": 0.3951, "c": 0.6049},
        "j2": {"a": 0.4123, "b": 0.5871},
        "j3": {"a": 0.3308, "b": 0.0177, "c": 0.6515},
    }
    replay = Replay(snapshot, allocation, rule=Rule.DEFICIT)
    worst = {100: 0.0, 2000: 0.0}
    while replay.rounds < 2000:
        replay.step()
        lag = max(replay.lag(j, k) for j, per in allocation.items() for k in per)
        for upto in worst:
            if replay.rounds <= upto:
                worst[upto] = max(worst[upto], lag)
    # Measured: 2.89 rounds by round 100, 3.54 by round 2,000 (and 4.05 by 3,000, 8.0 by
    # 20,000; Gavel's rule: 2.71, 4.07 by 1,000, 5.89 by 20,000).
    assert worst[100] > 2.5 and worst[2000] > worst[100] + 0.5, worst


def test_deficit_rule_serves_the_furthest_behind() -> None:
    """Hand-solved on one GPU (L = 1 round): X = a 0.5, b 0.25, c 0.25. Round n serves the
    largest X·n − received: (a .5 b .25 c .25) → a; (a 0 b .5 c .5) → b; (a .5 b −.25 c .75)
    → c; (a 1 b 0 c 0) → a; (a .5 b .25 c .25) → a; and the cycle repeats."""
    snapshot = parse_snapshot(
        {
            "nodes": [{"id": "n", "gpus": 1, "gpu_type": "g"}],
            "jobs": [{"id": j, "throughput": {"g": 1.0}} for j in "abc"],
        }
    )
    allocation = {"a": {"g": 0.5}, "b": {"g": 0.25}, "c": {"g": 0.25}}
    replay = Replay(snapshot, allocation, rule=Rule.DEFICIT)
    order = [replay.step().assignments[0].job for _ in range(8)]
    assert order == ["a", "b", "c", "a", "a", "b", "c", "a"]
    assert replay.lag("a", "g") == 0.0 and replay.lag("b", "g") == 0.0


def test_shares_converge_in_fraction_of_time() -> None:
    """The talk's allocation on its 1 + 1 + 1 GPUs: after 300 rounds every job's fraction of
    time on every type is within 1 % of X (the lag stays bounded while time grows)."""
    snapshot = parse_snapshot(
        {
            "nodes": [{"id": k, "gpus": 1, "gpu_type": k} for k in TYPES],
            "jobs": [{"id": f"job{i}", "throughput": dict.fromkeys(TYPES, 1.0)} for i in range(3)],
        }
    )
    allocation = {
        "job0": {"v100": 0.6, "p100": 0.4},
        "job1": {"v100": 0.2, "p100": 0.6, "k80": 0.2},
        "job2": {"v100": 0.2, "k80": 0.8},
    }
    replay = Replay(snapshot, allocation)
    replay.run(300)
    for job, per_type in allocation.items():
        for kind, share in per_type.items():
            fraction = replay.received[job][kind] / (300 * ROUND)
            assert abs(fraction - share) <= 0.01, (job, kind, fraction, share)


def test_a_round_of_ten_thousand_jobs_fills_every_gpu_and_keeps_leases() -> None:
    # Its time is a bench row (bench/rounds.py), not an assertion: CI shares its cores.
    raw, allocation, received = busy_round(round_seconds=ROUND)
    snapshot = parse_snapshot(raw)
    first = next_round(snapshot, allocation, received)
    previous = {a.job: a.placement for a in first.assignments}
    rnd = next_round(snapshot, allocation, received, previous)
    assert rnd.idle == dict.fromkeys(TYPES, 0) and any(a.kept for a in rnd.assignments)
