"""Reason codes of the placement policy (docs/EXPLANATIONS.md) on hand-solved cases: a job
refused for capacity (before the decision and after it), a gang that fits nowhere, jobs placed
with a contention penalty or without, and one not worth starting."""

from __future__ import annotations

from typing import Any

import pytest

from apportion.solver import solve
from tests.formulations.placement.test_reference import PARTING


def _cfg(cls: str, gpus: int, nodes: int) -> dict[str, Any]:
    return {"workload_class": cls, "gpus": gpus, "nodes": nodes}


# n0, n1 hold 4 GPUs, n2 2; r (A, 2 + 2 on n0, n1) runs, so 2 GPUs are free on each node.
# - pen (A, 4 GPUs as 2 × 2) can only start on a pair of nodes with n0 or n1 in it: next to r,
#   each slows the other by CS 1.5;
# - late (B, 4 GPUs as 2 × 2) could start there instead, at CS 2 both ways: it loses to pen, and
#   once pen and solo started, 1 GPU is left for it;
# - solo (A, 1 GPU) runs on one node: no network contention (DeepShare's scope);
# - big (A, 8 GPUs as 2 × 4) fits the idle nodes n0, n1 but not their 2 free GPUs each;
# - wide (A, 16 GPUs as 4 × 4) needs four 4-GPU nodes: there are two.
# With W1 = 0.1 each start is worth its GPUs (0.9 · 4/10 against at most 0.1 · 2/6 of CS).
CLUSTER = {
    "nodes": [{"id": "n0", "gpus": 4}, {"id": "n1", "gpus": 4}, {"id": "n2", "gpus": 2}],
    "jobs": [
        {"id": "r", "workload_class": "A", "placement": {"n0": 2, "n1": 2}},
        {"id": "pen", "workload_class": "A", "scale_factor": 4},
        {"id": "late", "workload_class": "B", "scale_factor": 4},
        {"id": "solo", "workload_class": "A", "scale_factor": 1},
        {"id": "big", "workload_class": "A", "scale_factor": 8},
        {"id": "wide", "workload_class": "A", "scale_factor": 16},
    ],
    "contention": {
        "entries": [
            {"target": _cfg("A", 4, 2), "co_runner": _cfg("A", 4, 2), "cs": 1.5},
            {"target": _cfg("A", 4, 2), "co_runner": _cfg("B", 4, 2), "cs": 2.0},
            {"target": _cfg("B", 4, 2), "co_runner": _cfg("A", 4, 2), "cs": 2.0},
        ]
    },
}
SHAPES = {"1": [[1, 1]], "4": [[2, 2]], "8": [[2, 4]], "16": [[4, 4]]}


@pytest.mark.parametrize("objective", ["linear", "reference"])
def test_capacity_gang_and_penalty_are_told_apart(objective: str) -> None:
    options = {"w1": 0.1, "shapes": SHAPES, "objective": objective, "explain": True}
    result = solve(CLUSTER, policy="contention_placement", options=options)
    assert result.explanation is not None and result.explanation.available
    why = {job.id: job for job in result.explanation.jobs}
    assert {j: why[j].code for j in why} == {
        "r": "contention_penalty",
        "pen": "contention_penalty",
        "late": "capacity",
        "solo": "granted",
        "big": "capacity",
        "wide": "gang_does_not_fit",
    }
    # The numbers behind them, checked against the placement the result reports.
    assert why["pen"].detail["cs"] == pytest.approx(1.5)
    assert why["pen"].detail["worst_co_runner"] == "r"
    assert why["r"].detail["cs"] == pytest.approx(1.5)
    assert why["solo"].detail["cs"] == 1.0
    free_after = 10 - sum(sum((job.placement or {}).values()) for job in result.jobs)
    assert free_after == 1
    assert why["late"].detail["taken_by_started"] is True
    assert why["late"].detail["free_gpus"] == free_after
    assert why["big"].detail["taken_by_started"] is False
    assert why["big"].detail["free_gpus"] == 6
    assert why["big"].detail["largest_free_node"] == 2
    assert why["wide"].detail["largest_node"] == 4


def test_a_job_not_worth_starting_has_lower_value_with_its_cost() -> None:
    """Linear objective at W1 = 0.4: starting c would take the objective from −0.1 to −0.2."""
    options = {"w1": 0.4, "shapes": {"2": [[2, 1]]}, "explain": True}
    result = solve(PARTING, policy="contention_placement", options=options)
    assert result.explanation is not None
    why = {job.id: job for job in result.explanation.jobs}
    assert why["c"].code == "lower_value"
    assert why["c"].detail["objective_change"] == pytest.approx(-0.1)
    assert why["r"].code == "granted"


def test_no_explanation_unless_asked() -> None:
    result = solve(PARTING, policy="contention_placement", options={"w1": 0.4})
    assert result.explanation is None
