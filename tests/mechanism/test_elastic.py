"""Configurations onto nodes: kept where they ran, best fit otherwise, repacked when kept ones
fragment the nodes, and never silently dropped."""

from __future__ import annotations

from apportion.mechanism.elastic import Want, place

NODES = [(f"n{i}", 4, "t4") for i in range(3)] + [("a0", 8, "a100")]


def _held(placed: dict[str, dict[str, int]], nodes: list[tuple[str, int, str]]) -> None:
    size = {n: g for n, g, _ in nodes}
    used: dict[str, int] = {}
    for held in placed.values():
        for node, gpus in held.items():
            used[node] = used.get(node, 0) + gpus
    assert all(used[n] <= size[n] for n in used)


def test_best_fit_decreasing_and_whole_nodes() -> None:
    wanted = {"big": Want("t4", 8, 2), "two": Want("t4", 2), "one": Want("t4", 1),
              "a": Want("a100", 4), "b": Want("a100", 4)}  # fmt: skip
    out = place(NODES, wanted, {})
    assert out.unplaced == [] and out.moved == []
    assert sorted(out.placements["big"].values()) == [4, 4]
    # 2 and 1 share the third node (best fit leaves no other hole)
    assert set(out.placements["two"]) == set(out.placements["one"])
    _held(out.placements, NODES)


def test_unchanged_configurations_keep_their_nodes() -> None:
    previous = {"x": {"n2": 2}}
    out = place(NODES, {"x": Want("t4", 2), "y": Want("t4", 4)}, previous)
    assert out.placements["x"] == {"n2": 2}
    assert out.moved == []


def test_fragmentation_repacks_and_names_who_moved() -> None:
    # x and y hold one GPU on n0 and n1; z needs two whole nodes: only a fresh packing fits all
    previous = {"x": {"n0": 1}, "y": {"n1": 1}}
    wanted = {"x": Want("t4", 1), "y": Want("t4", 1), "z": Want("t4", 8, 2)}
    out = place(NODES, wanted, previous)
    assert out.unplaced == []
    assert sorted(out.placements["z"].values()) == [4, 4]
    assert set(out.moved) >= {"x"} or set(out.moved) >= {"y"}
    _held(out.placements, NODES)


def test_what_cannot_fit_is_named() -> None:
    out = place(NODES, {"x": Want("a100", 8), "y": Want("a100", 1)}, {})
    assert out.unplaced == ["y"]
