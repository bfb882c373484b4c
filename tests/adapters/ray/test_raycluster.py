"""Reading Ray's documents (`ray.nodes()`, `placement_group_table()` entries as Ray 2.60
writes them) and the bundles a job's group asks for."""

from __future__ import annotations

from typing import Any

from apportion.adapters.ray.raycluster import bundles, parse_group, parse_node
from apportion.adapters.ray.scope import Scope

NODE: dict[str, Any] = {
    "NodeID": "f052ee779bdc",
    "Alive": True,
    "Resources": {
        "apportion_node_n0": 4.0,
        "apportion_gpu_v100": 4.0,
        "GPU": 4.0,
        "CPU": 1.0,
        "node:192.0.2.2": 1.0,
    },
}
GROUP = {
    "placement_group_id": "780e50c144891921d317011f157f01000000",
    "name": "apportion-default-12.3",
    "bundles": {
        "0": {"apportion_gpu_v100": 2.0, "apportion_node_n1": 2.0, "GPU": 2.0},
        "1": {"apportion_gpu_v100": 4.0, "apportion_node_n2": 4.0, "GPU": 4.0},
    },
    "bundles_to_node_id": {"0": "d18534", "1": "aa01"},
    "strategy": "PACK",
    "state": "CREATED",
}


def test_a_node_names_itself_and_its_type() -> None:
    node = parse_node(NODE)
    assert (node.name, node.gpu_type, node.gpus, node.alive, node.problem) == (
        "n0",
        "v100",
        4,
        True,
        None,
    )
    assert Scope().schedules(node) and not Scope(nodes=frozenset({"n1"})).schedules(node)


def test_a_node_with_two_types_or_too_small_a_name_resource_is_not_scheduled() -> None:
    two = parse_node({**NODE, "Resources": {**NODE["Resources"], "apportion_gpu_k80": 4.0}})
    assert two.problem == "declares 1 node names and 2 GPU types (one each)"
    small = parse_node({**NODE, "Resources": {**NODE["Resources"], "apportion_node_n0": 2.0}})
    assert small.problem == "its resource apportion_node_n0 is less than its 4 GPUs"
    assert not Scope().schedules(two) and not Scope().schedules(small)
    plain = parse_node({**NODE, "Resources": {"GPU": 4.0, "CPU": 1.0}})
    assert (plain.name, plain.gpu_type) == (None, None) and not Scope().schedules(plain)


def test_a_group_reads_back_as_its_type_and_placement() -> None:
    group = parse_group(GROUP)
    assert (group.name, group.state, group.gpu_type) == (
        "apportion-default-12.3",
        "CREATED",
        "v100",
    )
    assert group.placement == {"n1": 2, "n2": 4}
    assert group.by_node_id == {"d18534": 2, "aa01": 4}
    assert Scope().owns(group.name) == "12"
    assert Scope("other").owns(group.name) is None
    assert Scope().owns("apportion-default-x.1") is None
    assert Scope().owns("apportion-default-12") is None


def test_a_jobs_bundles_pin_type_and_node_and_read_back_as_its_placement() -> None:
    asked = bundles("k80", {"n3": 4, "n4": 2})
    assert asked == [
        {"GPU": 4.0, "apportion_gpu_k80": 4.0, "apportion_node_n3": 4.0},
        {"GPU": 2.0, "apportion_gpu_k80": 2.0, "apportion_node_n4": 2.0},
    ]
    group = parse_group({**GROUP, "bundles": {str(i): b for i, b in enumerate(asked)}})
    assert (group.gpu_type, group.placement) == ("k80", {"n3": 4, "n4": 2})
