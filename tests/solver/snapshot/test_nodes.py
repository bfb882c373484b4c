"""Nodes, running placements and the contention table in the snapshot: derived fields and every
inconsistency reported with its location."""

from __future__ import annotations

import pytest

from apportion.solver import InputError, parse_snapshot

NODES = [{"id": "n0", "gpus": 8}, {"id": "n1", "gpus": 4}]


def _errors(data: dict) -> dict[str, str]:
    with pytest.raises(InputError) as exc:
        parse_snapshot(data)
    return {e.path.removeprefix("snapshot."): e.msg for e in exc.value.errors}


def test_gpu_types_and_running_scale_factor_are_derived() -> None:
    snap = parse_snapshot(
        {
            "nodes": [*NODES, {"id": "n2", "gpus": 2, "gpu_type": "a100"}],
            "jobs": [{"id": "r", "placement": {"n0": 4, "n1": 2}}, {"id": "c", "scale_factor": 2}],
        }
    )
    assert {(g.name, g.count) for g in snap.gpu_types} == {("gpu", 12), ("a100", 2)}
    assert snap.jobs[0].scale_factor == 6
    assert snap.jobs[1].placement is None


def test_untyped_nodes_belong_to_the_only_gpu_type() -> None:
    snap = parse_snapshot({"gpu_types": [{"name": "v100", "count": 12}], "nodes": NODES})
    assert snap.nodes is not None and len(snap.nodes) == 2


@pytest.mark.parametrize(
    ("data", "path", "words"),
    [
        (
            {"gpu_types": [{"name": "v100", "count": 10}], "nodes": NODES},
            "gpu_types[0].count",
            "hold 12 GPUs",
        ),
        (
            {
                "gpu_types": [{"name": "v100", "count": 8}, {"name": "k80", "count": 4}],
                "nodes": [NODES[0], {"id": "n1", "gpus": 4, "gpu_type": "k80"}],
            },
            "nodes[0].gpu_type",
            "several GPU types",
        ),
        ({"nodes": [NODES[0], {"id": "n0", "gpus": 4}]}, "nodes", "duplicate node id"),
        (
            {"nodes": NODES, "jobs": [{"id": "r", "placement": {"n9": 2}}]},
            "jobs[0].placement.n9",
            "unknown node",
        ),
        (
            {
                "nodes": NODES,
                "jobs": [
                    {"id": "r", "placement": {"n1": 3}},
                    {"id": "s", "placement": {"n1": 2}},
                ],
            },
            "jobs[1].placement.n1",
            "has 4 GPUs",
        ),
        (
            {"nodes": NODES, "jobs": [{"id": "r", "scale_factor": 4, "placement": {"n0": 2}}]},
            "jobs[0].placement",
            "scale_factor is 4",
        ),
        (
            {
                "gpu_types": [{"name": "v100", "count": 4}],
                "jobs": [{"id": "r", "placement": {"n0": 1}}],
            },
            "jobs[0].placement",
            "needs the snapshot's `nodes`",
        ),
        (
            {"nodes": NODES, "jobs": [{"id": "r", "placement": {"n0": 0}}]},
            "jobs[0].placement.n0",
            "",
        ),
    ],
)
def test_inconsistencies_name_the_field(data: dict, path: str, words: str) -> None:
    errors = _errors(data)
    assert path in errors, errors
    assert words in errors[path]


def _entry(target: tuple, co_runner: tuple, cs: float) -> dict:
    def cfg(c: tuple) -> dict:
        return {"workload_class": c[0], "gpus": c[1], "nodes": c[2]}

    return {"target": cfg(target), "co_runner": cfg(co_runner), "cs": cs}


@pytest.mark.parametrize(
    ("table", "path", "words"),
    [
        (
            {"entries": [_entry(("A", 4, 2), ("B", 4, 2), 1.2)] * 2},
            "contention.entries[1]",
            "duplicate entry",
        ),
        (
            {"entries": [_entry(("A", 2, 4), ("B", 4, 2), 1.2)]},
            "contention.entries[0].target.nodes",
            "cannot hold",
        ),
        ({"entries": [_entry(("A", 4, 2), ("B", 4, 2), 0.9)]}, "contention.entries[0].cs", ""),
        (
            {"class_defaults": [{"target_class": "A", "co_runner_class": "B", "cs": 1.1}] * 2},
            "contention.class_defaults",
            "duplicate default",
        ),
    ],
)
def test_contention_table_errors(table: dict, path: str, words: str) -> None:
    errors = _errors({"nodes": NODES, "contention": table})
    assert path in errors, errors
    assert words in errors[path]
