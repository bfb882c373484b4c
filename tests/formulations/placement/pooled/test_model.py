"""The pooled placement relaxation: its bound never falls below the true optimum (brute force),
the slot rows close the gap that nodes holding two pieces of a family open (alone and
together), the lifted rows the gap that candidate co-runners open, and an export writes the
per-candidate model, not the relaxation."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import highspy
import numpy as np
import pytest

from apportion.formulations.placement.instance import Instance, build_instance
from apportion.formulations.placement.pooled.model import build
from apportion.refdata import SOURCE
from apportion.refdata.deepshare import read_contention_csv, read_trace, trace_snapshot
from apportion.solver.context import SolveContext
from apportion.solver.options import SolveOptions
from apportion.solver.pipeline import export_model
from apportion.solver.snapshot import Snapshot
from tests.formulations.placement.brute import brute_force, contention_json, random_instance

SHAPES = {1: [(1, 1)], 2: [(1, 2), (2, 1)], 4: [(1, 4), (2, 2), (4, 1)]}


def _instance(snapshot: dict[str, Any], table: dict, shapes: dict) -> Instance:
    snap = Snapshot.model_validate({**snapshot, "contention": contention_json(table)})
    return build_instance(snap, shapes, True, "multi_node")


def _pooled(inst: Instance, w1: float) -> tuple[float, float]:
    """The pooled optimum with every candidate pair modeled, and how many jobs of the family
    started with the most pieces reach its top level."""
    modeled = np.ones((len(inst.configs),) * 2, bool)
    pooled = build(inst, w1, modeled)
    solution = SolveContext(SolveOptions(mip_gap=0.0)).solve(pooled.model)
    assert solution.objective is not None
    own = pooled.own
    assert own.block is not None
    top = int(np.argmax(own.level))
    return solution.objective, float(solution.x[own.block.span][top])


@pytest.mark.parametrize("seed", range(40))
def test_the_pooled_bound_is_never_below_the_optimum(seed: int) -> None:
    rng = random.Random(seed)
    snapshot, table = random_instance(rng)
    w1 = rng.choice([0.2, 0.5, 0.8])
    inst = _instance(snapshot, table, SHAPES)
    if not inst.options.size:
        return
    best = brute_force(snapshot, table, SHAPES, w1, "worst", "multi_node")
    modeled = np.ones((len(inst.configs),) * 2, bool)
    for lifted in (False, True):
        pooled = build(inst, w1, modeled, lifted)
        solution = SolveContext(SolveOptions(mip_gap=0.0)).solve(pooled.model)
        assert solution.objective is not None
        assert solution.objective >= best - 1e-9


def _assert_bound_exact_and_both_suffer(
    snapshot: dict, table: dict, shapes: dict[int, list[tuple[int, int]]]
) -> None:
    """The pooled bound equals brute force and counts both candidate jobs as suffering."""
    inst = _instance(snapshot, table, shapes)
    best = brute_force(snapshot, table, shapes, 0.5, "worst", "multi_node")
    bound, suffering = _pooled(inst, 0.5)
    assert bound == pytest.approx(best, abs=1e-9)
    assert suffering == pytest.approx(2.0)


def test_slot_rows_count_a_node_that_both_jobs_must_use() -> None:
    # Two identical 2-node jobs, one GPU per node. H1 and H2 sit next to a running job that
    # slows A down; C (two free GPUs) is quiet. Both jobs need C (it takes two pieces and a job
    # uses a node once), so each also takes one of H1, H2: both suffer. Without the slot rows
    # the relaxation pairs H1 with H2 in one job and leaves the other job quiet.
    snapshot = {
        "nodes": [{"id": "H1", "gpus": 2}, {"id": "H2", "gpus": 2}, {"id": "C", "gpus": 2}],
        "jobs": [
            {"id": "r", "workload_class": "B", "placement": {"H1": 1, "H2": 1}},
            {"id": "a1", "workload_class": "A", "scale_factor": 2},
            {"id": "a2", "workload_class": "A", "scale_factor": 2},
        ],
    }
    a, b = ("A", 2, 2), ("B", 2, 2)
    table = {(a, b): 1.5, (b, a): 1.0, (a, a): 1.0, (b, b): 1.0}
    shapes = {2: [(2, 1)]}
    _assert_bound_exact_and_both_suffer(snapshot, table, shapes)


def test_slot_rows_count_the_slots_that_shared_nodes_take_together() -> None:
    # Two identical 4-node jobs, one GPU per node, and exactly their 8 free GPUs. C1 and C2 take
    # two pieces each, so both jobs use both, and each job has two slots left for H1, H2, H3
    # (next to a running job that slows A down) and the quiet Q: both jobs suffer. Counting
    # C1 or C2 alone would allow one job to take all three H nodes.
    snapshot = {
        "nodes": [
            *({"id": n, "gpus": 2} for n in ("C1", "C2", "H1", "H2", "H3")),
            {"id": "Q", "gpus": 1},
        ],
        "jobs": [
            {"id": "r", "workload_class": "B", "placement": {"H1": 1, "H2": 1, "H3": 1}},
            {"id": "a1", "workload_class": "A", "scale_factor": 4},
            {"id": "a2", "workload_class": "A", "scale_factor": 4},
        ],
    }
    a, b = ("A", 4, 4), ("B", 3, 3)
    table = {(a, b): 1.5, (b, a): 1.0, (a, a): 1.0, (b, b): 1.0}
    shapes = {4: [(4, 1)]}
    _assert_bound_exact_and_both_suffer(snapshot, table, shapes)


def test_lifted_rows_count_a_piece_a_candidate_lifts_to_the_level() -> None:
    # Two 2-node jobs of A and a 2-node job of D fill the six free GPUs. A suffers 1.5 next to
    # the running B (on H1, H2) and next to D; D keeps off H1, H2 (3.0 next to B). With D on X
    # and Y, A's pieces on H1, H2 and X are all at 1.5: three pieces, two to a job, so both A
    # jobs suffer, whichever way D goes. Counting only B's nodes, one job would take H1 and H2.
    snapshot = {
        "nodes": [
            {"id": "H1", "gpus": 2},
            {"id": "H2", "gpus": 2},
            {"id": "X", "gpus": 2},
            {"id": "Y", "gpus": 1},
            {"id": "Q", "gpus": 1},
        ],
        "jobs": [
            {"id": "r", "workload_class": "B", "placement": {"H1": 1, "H2": 1}},
            {"id": "a1", "workload_class": "A", "scale_factor": 2},
            {"id": "a2", "workload_class": "A", "scale_factor": 2},
            {"id": "d", "workload_class": "D", "scale_factor": 2},
        ],
    }
    a, b, d = ("A", 2, 2), ("B", 2, 2), ("D", 2, 2)
    table = {(a, b): 1.5, (a, d): 1.5, (d, b): 3.0}
    shapes = {2: [(2, 1)]}
    inst = _instance(snapshot, table, shapes)
    best = brute_force(snapshot, table, shapes, 0.5, "worst", "multi_node")
    modeled = np.ones((len(inst.configs),) * 2, bool)
    bounds = [
        SolveContext(SolveOptions(mip_gap=0.0)).solve(build(inst, 0.5, modeled, lifted).model)
        for lifted in (False, True)
    ]
    assert bounds[0].objective is not None and bounds[0].objective > best + 1e-6
    assert bounds[1].objective == pytest.approx(best, abs=1e-9)


def test_an_export_is_the_per_candidate_model(tmp_path: Path) -> None:
    trace = read_trace(SOURCE / "deepshare_trace0.json")
    snapshot = trace_snapshot(trace, nodes=4, running=8, candidates=6, seed=0)
    snapshot["contention"] = read_contention_csv(
        SOURCE / "deepshare_shared_thp_ratio.csv"
    ).model_dump()
    path = tmp_path / "model.lp"
    export_model(snapshot, path, policy="contention_placement", options={"w1": 0.5})
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    assert h.readModel(str(path)) == highspy.HighsStatus.kOk
    names = " ".join(h.getLp().col_names_)
    assert "use(" in names and "pieces(" not in names
