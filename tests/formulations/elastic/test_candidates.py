"""Candidates from a goodput model: one per node shape of each type, at the best batch size."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from apportion.formulations.elastic.goodput import JobModel, PerfParams, best_batch
from apportion.formulations.elastic.shapes import node_shapes
from apportion.solver import solve

PARAMS = {"alpha_c": 0.02, "beta_c": 0.0007, "alpha_n": 0.09, "beta_n": 0.002,
          "alpha_r": 0.07, "beta_r": 0.0001, "gamma": 1.24}  # fmt: skip
MODEL: dict[str, Any] = {
    "init_batch": 128,
    "max_batch": 4096,
    "grad_sqr": 1.0,
    "grad_var": 20.0,
    "types": {
        "t4": {**PARAMS, "min_local_batch": 32, "max_local_batch": 1024},
        "a100": {**PARAMS, "min_local_batch": 32, "max_local_batch": 4096, "scale": 3.0,
                 "max_nodes": 1},
    },
}  # fmt: skip
CLUSTER = {
    "gpu_types": [{"name": "t4", "count": 12}, {"name": "a100", "count": 16}],
    "nodes": [{"id": f"t{i}", "gpus": 4, "gpu_type": "t4"} for i in range(3)]
    + [{"id": f"a{i}", "gpus": 8, "gpu_type": "a100"} for i in range(2)],
}


def test_sias_node_shapes() -> None:
    assert node_shapes(4, 6) == [(1, 1), (1, 2), (1, 4), (2, 8), (3, 12), (4, 16), (5, 20),
                                 (6, 24)]  # fmt: skip
    assert [g for _, g in node_shapes(8, 3)] == [1, 2, 4, 8, 16, 24]


def test_a_model_gives_a_configuration_per_shape_at_its_best_batch() -> None:
    snapshot = {**CLUSTER, "jobs": [{"id": "j", "elastic": {"model": MODEL, "max_gpus": 8}}]}
    result = solve(snapshot, policy="elastic_max_goodput", options={"mip_gap": 0.0})
    job = result.jobs[0]
    # every shape: t4 1, 2, 4, 8 (two nodes); a100 1, 2, 4, 8 (one node: max_nodes 1)
    shapes = {"t4": [(1, 1), (1, 2), (1, 4), (2, 8)], "a100": [(1, 1), (1, 2), (1, 4), (1, 8)]}
    best = {}
    for gpu, spec in MODEL["types"].items():
        model = JobModel(
            PerfParams(*(spec[k] for k in PARAMS)), 128, 4096, 1.0, 20.0, 32,
            spec["max_local_batch"], spec.get("scale", 1.0),
        )  # fmt: skip
        n, g = (np.array(v, dtype=float) for v in zip(*shapes[gpu], strict=True))
        choice = best_batch(model, n, g)
        for i in range(g.size):
            best[(gpu, int(g[i]))] = (choice.goodput[i], choice.batch[i])
    top = max(best, key=lambda k: best[k][0])
    assert (job.metrics["gpu_type"], job.metrics["gpus"]) == top
    assert job.effective_throughput == pytest.approx(best[top][0])
    assert job.metrics["batch_size"] == best[top][1]
    # normalized against the least of all 8 candidates
    assert job.metrics["normalized_goodput"] == pytest.approx(
        best[top][0] / min(v for v, _ in best.values())
    )
