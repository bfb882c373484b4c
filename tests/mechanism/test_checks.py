"""Bad inputs name their field from a request's root, in the library as over HTTP."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from apportion.mechanism import PairShare, next_round
from apportion.solver.errors import InputError
from apportion.solver.snapshot import parse_snapshot
from tests.mechanism.rounds_checks import ROUND, cluster

SNAPSHOT = cluster({"v": ("v100", 4), "k": ("k80", 2)}, [("a", 1), ("b", 1), ("c", 2)])


def _locs(
    allocation: Mapping[str, Any],
    received: Mapping[str, Any] | None = None,
    previous: Mapping[str, Any] | None = None,
    pairs: Sequence[PairShare] = (),
    elapsed: float | None = None,
) -> dict[tuple[str | int, ...], str]:
    with pytest.raises(InputError) as caught:
        next_round(SNAPSHOT, allocation, received or {}, previous, pairs, elapsed=elapsed)
    return {e.loc: e.msg for e in caught.value.errors}


def test_unknown_jobs_types_and_bad_numbers() -> None:
    locs = _locs(
        {"zz": {"v100": 0.5}, "a": {"a100": 0.5, "v100": 1.5}, "b": {"k80": float("nan")}},
        {"a": {"v100": -1.0}, "yy": {"k80": 1.0}},
    )
    assert locs == {
        ("allocation", "zz"): "unknown job 'zz'",
        ("allocation", "a", "a100"): "unknown GPU type 'a100'",
        ("allocation", "a", "v100"): "a time fraction is between 0 and 1",
        ("allocation", "b", "k80"): "a time fraction is between 0 and 1",
        ("received", "a", "v100"): "must be finite, ≥ 0",
        ("received", "yy"): "unknown job 'yy'",
    }


def test_previous_placements_must_fit_their_nodes() -> None:
    locs = _locs(
        {"a": {"v100": 1.0}},
        previous={"a": {"v": 5}, "b": {"nope": 1}, "c": {"v": 1, "k": 1}, "x": {"v": 1}},
    )
    assert locs == {
        ("previous", "a", "v"): "node 'v' has 4 GPUs: hold from 1 to 4 there",
        ("previous", "b", "nope"): "unknown node 'nope'",
        ("previous", "c"): "a gang holds GPUs of one type; these span ['k80', 'v100']",
        ("previous", "x"): "unknown job 'x'",
    }


def test_pairs_are_two_known_jobs_of_one_gang_size() -> None:
    pairs = (
        PairShare("a", "q", {"v100": 0.5}),
        PairShare("a", "a", {"v100": 0.5}),
        PairShare("a", "c", {"v100": 0.5}),
        PairShare("a", "b", {"v100": 2.0}),
        PairShare("b", "a", {"v100": 0.5}),
    )
    locs = _locs({}, pairs=pairs)
    assert locs == {
        ("pairs", 0, "b"): "unknown job 'q'",
        ("pairs", 1, "b"): "job 'a' paired with itself",
        ("pairs", 2): "a pair shares one gang: scale factors 1 and 2",
        ("pairs", 3, "allocation", "v100"): "a time fraction is between 0 and 1",
        ("pairs", 4): "duplicate pair 'a', 'b'",
    }


def test_time_together_is_part_of_each_members_time() -> None:
    pairs = (PairShare("a", "b", {"v100": 0.5}, {"v100": 2 * ROUND}),)
    locs = _locs({}, {"a": {"v100": 3 * ROUND}, "b": {"v100": ROUND}}, pairs=pairs)
    assert locs == {
        ("pairs", 0, "received", "v100"): "720 s together exceeds 'b''s received 360 s on 'v100'"
    }


def test_a_job_is_given_at_most_all_of_its_time() -> None:
    pairs = (PairShare("a", "b", {"k80": 0.5}),)
    locs = _locs({"a": {"v100": 0.75}, "c": {"v100": 0.6, "k80": 0.6}}, pairs=pairs)
    assert locs == {
        ("allocation", "a"): "'a' is given 1.25 of the time (more than 1)",
        ("allocation", "c"): "'c' is given 1.2 of the time (more than 1)",
    }


def test_elapsed_covers_every_jobs_received_time() -> None:
    locs = _locs({"a": {"v100": 1.0}}, {"a": {"v100": 3 * ROUND}}, elapsed=ROUND)
    assert locs == {("elapsed",): "'a' has received 1080 s, more than the 360 s elapsed"}


def test_a_round_needs_nodes() -> None:
    snapshot = parse_snapshot({"gpu_types": [{"name": "g", "count": 1}], "jobs": [{"id": "a"}]})
    with pytest.raises(InputError) as caught:
        next_round(snapshot, {"a": {"g": 1.0}}, {})
    assert [e.loc for e in caught.value.errors] == [("snapshot", "nodes")]
