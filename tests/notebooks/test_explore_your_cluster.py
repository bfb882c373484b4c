"""notebooks/explore_your_cluster.ipynb in a real kernel at its small size: every plot is drawn,
its Pareto fronts are the non-dominated points (recomputed here from the points it quotes), the
min_cost_slo curve behaves as looser deadlines must (more SLOs met, then a lower price), and
removing a GPU type never raises the best throughput while adding GPUs never lowers it, and
water filling keeps max-min's minimum while giving the other jobs more."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import numpy as np
import pytest

from tests.notebooks.kernel import code_cells, execute, images
from tests.notebooks.kernel import quoted as read_quoted

# (fairness axis, other axis, +1 if more of the other axis is better, −1 if less is)
PANELS = {
    "min_share_vs_throughput": ("min_share", "throughput", +1),
    "min_share_vs_cost": ("min_share", "cost", -1),
    "jain_vs_throughput": ("jain", "throughput", +1),
    "jain_vs_cost": ("jain", "cost", -1),
}
TOLERANCE = 1e-6


@pytest.fixture(scope="module")
def notebook() -> Any:
    return execute("explore_your_cluster.ipynb")


@pytest.fixture(scope="module")
def quoted(notebook: Any) -> dict[str, Any]:
    return read_quoted(notebook)


def test_every_plotting_cell_shows_its_figure(notebook: Any) -> None:
    plotting = [cell for cell in code_cells(notebook) if "plt.show()" in cell.source]
    # SLO cost curve, the fronts, GPU types, water filling against one LP, one allocation
    assert len(plotting) == 5
    assert [images(cell) for cell in plotting] == [1, 1, 1, 1, 1]


def test_it_ran_the_bundled_snapshot_at_the_small_size(quoted: dict[str, Any]) -> None:
    assert quoted["size"] == "small"
    assert quoted["snapshot"] == "gavel_physical_96.json"
    assert {"max-min", "water filling", "max throughput"} <= set(quoted["policies"])


def _dominated(point: np.ndarray, others: np.ndarray, scale: np.ndarray) -> bool:
    slack = TOLERANCE * scale
    at_least = (others >= point - slack).all(axis=1)
    better = (others > point + slack).any(axis=1)
    return bool((at_least & better).any())


@pytest.mark.parametrize("panel", list(PANELS))
def test_each_front_is_exactly_the_non_dominated_points(quoted: dict[str, Any], panel: str) -> None:
    fair, other, sense = PANELS[panel]
    labels = list(quoted["points"])
    xy = np.array([[quoted["points"][k][fair], sense * quoted["points"][k][other]] for k in labels])
    scale = np.maximum(np.abs(xy).max(axis=0), 1e-12)
    expected = [k for i, k in enumerate(labels) if not _dominated(xy[i], xy, scale)]
    assert quoted["fronts"][panel] == expected
    assert expected  # a finite set always has a non-dominated point


def test_looser_deadlines_meet_more_slos_then_cost_less(quoted: dict[str, Any]) -> None:
    curve = quoted["slo"]["curve"]
    assert all(point["status"] == "optimal" for point in curve)
    met = [point["met"] for point in curve]
    assert met == sorted(met)  # a looser deadline keeps every earlier allocation feasible
    jobs = max(met)
    tightest = quoted["slo"]["tightest_all_met_slack"]
    assert tightest == min(p["slack"] for p in curve if p["met"] == jobs)
    costs = [p["cost"] for p in curve if p["slack"] >= tightest]
    assert all(b <= a * (1 + TOLERANCE) for a, b in pairwise(costs))
    assert quoted["slo"]["cost_at_loosest"] < quoted["slo"]["cost_at_tightest"]


def test_gpu_types_removed_never_help_and_added_never_hurt(quoted: dict[str, Any]) -> None:
    cluster = quoted["cluster"]
    base = cluster["as given"]
    removed = {k: v for k, v in cluster.items() if k.startswith("without ")}
    added = {k: v for k, v in cluster.items() if k.startswith("+")}
    assert len(removed) == len(added) == 3  # k80, p100, v100
    for variant in removed.values():
        assert variant["throughput"] <= base["throughput"] * (1 + TOLERANCE)
        assert variant["cluster_cost"] < base["cluster_cost"]
    for variant in added.values():
        assert variant["throughput"] >= base["throughput"] * (1 - TOLERANCE)
        assert variant["min_share"] >= base["min_share"] * (1 - TOLERANCE)


def test_on_the_oversubscribed_snapshot_only_min_cost_slo_is_cheaper(
    quoted: dict[str, Any],
) -> None:
    whole = quoted["cluster"]["as given"]["cluster_cost"]
    for label, score in quoted["policies"].items():
        assert score["cost"] == pytest.approx(whole, rel=TOLERANCE), label
    cheaper = [k for k, v in quoted["points"].items() if v["cost"] < whole * (1 - TOLERANCE)]
    assert cheaper and all(k.startswith("min cost") for k in cheaper)


def test_water_filling_keeps_the_minimum_and_raises_the_rest(quoted: dict[str, Any]) -> None:
    single, leximin = quoted["water_filling"]["max-min, one LP"], quoted["water_filling"]["water filling"]
    assert leximin["min"] == pytest.approx(single["min"], rel=1e-6)
    assert leximin["median"] > single["median"] and leximin["sum"] > single["sum"]
    assert quoted["water_filling"]["levels"] > 1
