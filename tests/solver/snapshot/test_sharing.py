"""Schema of entities and job pairs: valid documents load, each mistake names its field."""

from __future__ import annotations

import pytest

from apportion.solver import InputError, parse_snapshot

BASE = {
    "gpu_types": [{"name": "v100", "count": 2}],
    "jobs": [
        {"id": "a", "entity": "team-1", "throughput": {"v100": 1.0}},
        {"id": "b", "entity": "team-2", "throughput": {"v100": 2.0}},
    ],
    "entities": [{"id": "team-1", "weight": 2}, {"id": "team-2", "policy": "fifo"}],
    "job_pairs": [{"a": "a", "b": "b", "throughput": {"v100": [0.5, 1.5]}}],
}


def errors_of(document: dict) -> list[tuple[tuple, str]]:
    with pytest.raises(InputError) as caught:
        parse_snapshot(document)
    return [(e.loc, e.msg) for e in caught.value.errors]


def test_valid_document_loads_with_defaults() -> None:
    snapshot = parse_snapshot(BASE)
    assert snapshot.entities is not None and snapshot.entities[0].policy == "fairness"
    assert snapshot.entities[1].weight == 1.0
    assert snapshot.job_pairs is not None and snapshot.job_pairs[0].throughput["v100"] == (0.5, 1.5)
    # Both fields are optional: a v1 document without them is unchanged.
    plain = parse_snapshot({"gpu_types": BASE["gpu_types"], "jobs": BASE["jobs"]})
    assert plain.entities is None and plain.job_pairs is None


def test_unknown_entity() -> None:
    bad = {**BASE, "entities": [{"id": "team-1"}]}
    ((loc, msg),) = errors_of(bad)
    assert loc == ("snapshot", "jobs", 1, "entity")
    assert "unknown entity 'team-2'" in msg


def test_entity_fields() -> None:
    found = errors_of({**BASE, "entities": [{"id": "team-1", "weight": 0, "policy": "lottery"}]})
    locs = {loc for loc, _ in found}
    assert ("snapshot", "entities", 0, "weight") in locs
    assert ("snapshot", "entities", 0, "policy") in locs
    duplicate = {**BASE, "entities": [{"id": "team-1"}, {"id": "team-1"}, {"id": "team-2"}]}
    assert errors_of(duplicate) == [(("snapshot", "entities"), "duplicate entity id 'team-1'")]


@pytest.mark.parametrize(
    ("pair", "loc", "text"),
    [
        ({"a": "a", "b": "zz", "throughput": {}}, ("snapshot", "job_pairs", 1, "b"), "unknown job"),
        ({"a": "a", "b": "a", "throughput": {}}, ("snapshot", "job_pairs", 1), "with itself"),
        ({"a": "b", "b": "a", "throughput": {}}, ("snapshot", "job_pairs", 1), "duplicate pair"),
        (
            {"a": "a", "b": "b", "throughput": {"a100": [1, 1]}},
            ("snapshot", "job_pairs", 1, "throughput", "a100"),
            "unknown GPU type",
        ),
        (
            {"a": "a", "b": "b", "throughput": {"v100": [1, -1]}},
            ("snapshot", "job_pairs", 1, "throughput", "v100", 1),
            "greater than or equal to 0",
        ),
    ],
)
def test_pair_mistakes_name_the_pair(pair: dict, loc: tuple, text: str) -> None:
    found = errors_of({**BASE, "job_pairs": [*BASE["job_pairs"], pair]})
    assert any(where == loc and text in m for where, m in found), found
