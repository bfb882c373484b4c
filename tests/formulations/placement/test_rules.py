"""Placement rules a scheduler relies on: shapes, consolidation, GPU types, limits, bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

from apportion.formulations.placement.greedy import greedy
from apportion.formulations.placement.instance import build_instance, default_shapes
from apportion.formulations.placement.model import canonical
from apportion.formulations.placement.options import ContentionPlacementOptions
from apportion.formulations.placement.per_candidate import build, start_vector
from apportion.refdata import FIXTURES, SOURCE
from apportion.refdata.deepshare import read_contention_csv, read_trace, trace_snapshot
from apportion.solver import InputError, Status, parse_snapshot, solve


@pytest.fixture(scope="module")
def table() -> dict:
    return read_contention_csv(SOURCE / "deepshare_shared_thp_ratio.csv").model_dump()


def test_default_shapes_are_powers_of_two_up_to_the_node() -> None:
    assert default_shapes(8, 8, True) == [(1, 8), (2, 4), (4, 2), (8, 1)]
    assert default_shapes(6, 8, True) == [(1, 6), (3, 2), (6, 1)]
    assert default_shapes(16, 8, True) == [(2, 8), (4, 4), (8, 2), (16, 1)]
    assert default_shapes(4, 8, False) == [(2, 2), (4, 1)]
    assert default_shapes(1, 8, False) == [(1, 1)]


def test_deepshare_rules_no_single_node_and_listed_shapes(table: dict) -> None:
    snapshot = json.loads((FIXTURES / "deepshare_cluster.json").read_text())
    snapshot["contention"] = table
    shapes = {"8": [[4, 2]], "4": [[2, 2]], "2": [[2, 1]]}
    result = solve(snapshot, options={"w1": 0.3, "shapes": shapes, "allow_single_node": False})
    demand = {j["id"]: j.get("scale_factor") for j in snapshot["jobs"] if "placement" not in j}
    started = [j for j in result.jobs if j.metrics["state"] == "started"]
    assert started
    for job in started:
        k, p = len(job.placement), set(job.placement.values())
        assert [k, *p] in shapes[str(demand[job.id])], job


def _two_types_cluster() -> dict:
    return {
        "gpu_types": [{"name": "v100", "count": 16}, {"name": "a100", "count": 8}],
        "nodes": [
            {"id": "v0", "gpus": 8, "gpu_type": "v100"},
            {"id": "v1", "gpus": 8, "gpu_type": "v100"},
            {"id": "a0", "gpus": 8, "gpu_type": "a100"},
        ],
        "jobs": [
            {"id": "big", "workload_class": "A", "scale_factor": 8, "consolidate": True},
            {"id": "v-only", "workload_class": "B", "scale_factor": 8, "throughput": {"v100": 1.0}},
            {"id": "any", "workload_class": "C", "scale_factor": 8},
        ],
    }


def test_gpu_types_consolidation_and_usage() -> None:
    result = solve(_two_types_cluster(), policy="contention_placement", options={"w1": 0.1})
    assert set(result.job("v-only").placement or {}) <= {"v0", "v1"}
    assert len(result.job("big").placement or {}) == 1
    type_of = {n["id"]: n["gpu_type"] for n in _two_types_cluster()["nodes"]}
    for job in result.jobs:
        assert len({type_of[n] for n in job.placement or {}}) <= 1, f"{job.id} spans GPU types"
    used = {g.name: g.used for g in result.gpu_types}
    assert used == {"v100": 16.0, "a100": 8.0}


def test_consolidated_job_waits_rather_than_spread() -> None:
    snapshot = _two_types_cluster()
    snapshot["jobs"].insert(
        0, {"id": "r", "workload_class": "A", "placement": {"v0": 1, "v1": 1, "a0": 1}}
    )
    result = solve(snapshot, policy="contention_placement", options={"w1": 0.0})
    assert result.job("big").placement is None
    assert "no allowed shape fits" in (result.job("big").reason or "")


def test_time_limit_returns_the_incumbent_with_its_gap(table: dict) -> None:
    trace = read_trace(SOURCE / "deepshare_trace0.json")
    snapshot = trace_snapshot(trace, nodes=64, running=70, candidates=100, seed=0)
    snapshot["contention"] = table
    result = solve(snapshot, options={"w1": 0.5, "time_limit": 2.0})
    assert result.status in (Status.FEASIBLE, Status.FALLBACK)
    assert result.solver.mip_gap is not None and result.solver.mip_gap > 0
    assert result.summary["started"] > 0
    free = {n["id"]: n["gpus"] for n in snapshot["nodes"]}
    for job in result.jobs:
        for node, gpus in (job.placement or {}).items():
            free[node] -= gpus
    assert min(free.values()) >= 0


def test_greedy_start_is_kept_by_the_symmetry_rows(table: dict) -> None:
    """The starting incumbent, made canonical, satisfies every placement row of the model."""
    trace = read_trace(SOURCE / "deepshare_trace0.json")
    snapshot = trace_snapshot(trace[40:], nodes=32, running=40, candidates=40, seed=3)
    snapshot["contention"] = table
    inst = build_instance(parse_snapshot(snapshot), None, True, "multi_node")
    start = canonical(inst, greedy(inst, 0.5, "worst"))
    model, pl = build(inst, ContentionPlacementOptions(w1=0.5))
    compiled = model.compile()
    index, values = start_vector(inst, pl, start)
    x = np.zeros(compiled.num_cols)
    x[index] = values
    ax = compiled.matrix @ x
    for block in compiled.constraints:
        if block.name.startswith(("symmetry", "shape", "capacity", "start", "pieces")):
            rows = block.span
            assert (ax[rows] <= compiled.row_upper[rows] + 1e-9).all(), block.name
            assert (ax[rows] >= compiled.row_lower[rows] - 1e-9).all(), block.name


@pytest.mark.parametrize(
    ("snapshot", "options", "loc"),
    [
        ({"gpu_types": [{"name": "v100", "count": 4}], "jobs": []}, {}, ("nodes",)),
        (
            {"nodes": [{"id": "n0", "gpus": 8}], "jobs": []},
            {"shapes": {"8": [[3, 2]]}},
            ("options", "shapes"),
        ),
        ({"nodes": [{"id": "n0", "gpus": 8}], "jobs": []}, {"w1": 1.5}, ("options", "w1")),
    ],
)
def test_bad_input_names_the_field(snapshot: dict, options: dict, loc: tuple) -> None:
    with pytest.raises(InputError) as exc:
        solve(snapshot, policy="contention_placement", options=options)
    assert exc.value.errors[0].loc[: len(loc)] == loc
