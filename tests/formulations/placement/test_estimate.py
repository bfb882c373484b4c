"""The linear estimate behind the placement start: its per-piece prices by hand, its packing
against brute force where packing is all that counts (W1 = 0), and a contended node avoided."""

from __future__ import annotations

import random
from typing import Any

import pytest

from apportion.formulations.placement.answer import check_feasible
from apportion.formulations.placement.estimate import build, piece_costs
from apportion.formulations.placement.evaluate import evaluate
from apportion.formulations.placement.instance import Instance, build_instance
from apportion.formulations.placement.pooled.decode import decode
from apportion.solver.context import SolveContext
from apportion.solver.options import SolveOptions
from apportion.solver.snapshot import Snapshot
from tests.formulations.placement.brute import brute_force, contention_json, random_instance

SHAPES = {1: [(1, 1)], 2: [(1, 2), (2, 1)], 4: [(1, 4), (2, 2), (4, 1)]}
A, B = ("A", 2, 2), ("B", 2, 2)
TABLE = {(A, B): 1.3, (B, A): 1.2, (A, A): 1.0, (B, B): 1.0}


def _instance(snapshot: dict[str, Any], table: dict, shapes: dict) -> Instance:
    snap = Snapshot.model_validate({**snapshot, "contention": contention_json(table)})
    return build_instance(snap, shapes, True, "multi_node")


def _placement(inst: Instance, w1: float) -> dict[int, tuple[int, list[int]]]:
    estimate = build(inst, w1)
    solution = SolveContext(SolveOptions(mip_gap=0.0)).solve(estimate.model)
    started = decode(inst, estimate, solution.x)
    assert not check_feasible(inst, started)
    return started


def _quiet_and_busy() -> dict[str, Any]:
    """A 2-node running job r of class B on N1, N2; N3, N4 empty; one 2-node candidate of A."""
    return {
        "nodes": [{"id": f"N{i}", "gpus": 2} for i in range(1, 5)],
        "jobs": [
            {"id": "r", "workload_class": "B", "placement": {"N1": 1, "N2": 1}},
            {"id": "a", "workload_class": "A", "scale_factor": 2},
        ],
    }


def test_a_piece_pays_what_it_suffers_and_what_it_inflicts() -> None:
    inst = _instance(_quiet_and_busy(), TABLE, {2: [(2, 1)]})
    cost = piece_costs(inst)
    a = inst.configs.index(A)
    # Next to r: A suffers 1.3 and r suffers 1.2 (its floor is 1): 0.3 + 0.2. Alone: nothing.
    assert cost[a].tolist() == pytest.approx([0.5, 0.5, 0.0, 0.0])


def test_the_estimate_avoids_the_contended_nodes() -> None:
    inst = _instance(_quiet_and_busy(), TABLE, {2: [(2, 1)]})
    started = _placement(inst, 0.5)
    assert [sorted(inst.node_ids[n] for n in nodes) for _, nodes in started.values()] == [
        ["N3", "N4"]
    ]


@pytest.mark.parametrize("seed", range(20))
def test_without_contention_weight_the_estimate_packs_optimally(seed: int) -> None:
    rng = random.Random(seed)
    snapshot, table = random_instance(rng)
    inst = _instance(snapshot, table, SHAPES)
    if not inst.options.size:
        return
    best = brute_force(snapshot, table, SHAPES, 0.0, "worst", "multi_node")
    value = evaluate(inst, _placement(inst, 0.0), 0.0, "worst").objective
    assert value == pytest.approx(best, abs=1e-9)
