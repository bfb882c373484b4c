"""notebooks/heterogeneity.ipynb in a real kernel at its small size: every plot is drawn, and
the numbers it quotes say what Gavel says: knowing each job's speed per GPU type lowers average
JCT (physical trace and every load), the makespan of a batch and the worst finish-time ratio;
and on Gavel's physical trace apportion's max-min, water filling and finish-time fairness finish
jobs no later on average than Gavel's own simulator does with its versions of them."""

from __future__ import annotations

from typing import Any

import pytest

from tests.notebooks.kernel import code_cells, execute, images
from tests.notebooks.kernel import quoted as read_quoted


@pytest.fixture(scope="module")
def notebook() -> Any:
    return execute("heterogeneity.ipynb")


@pytest.fixture(scope="module")
def quoted(notebook: Any) -> dict[str, Any]:
    return read_quoted(notebook)


def test_every_plotting_cell_shows_its_figure(notebook: Any) -> None:
    plotting = [cell for cell in code_cells(notebook) if "plt.show()" in cell.source]
    # physical, against Gavel's simulator, JCT against load, the queue over time, JCT CDF,
    # makespan, ρ CDF
    assert len(plotting) == 7
    assert [images(cell) for cell in plotting] == [1] * len(plotting)


def test_it_ran_at_the_small_size(quoted: dict[str, Any]) -> None:
    assert quoted["size"] == "small"


def test_aware_max_min_lowers_average_jct(quoted: dict[str, Any]) -> None:
    physical = quoted["physical_jct_h"]
    assert physical["aware max-min"] <= physical["agnostic max-min"]
    assert quoted["physical_ratio"] >= 1.0
    by_load = quoted["load_jct_h"]
    for load, agnostic in by_load["agnostic max-min"].items():
        assert by_load["aware max-min"][load] <= agnostic
    assert quoted["load_ratio_max"] >= 1.0


def test_aware_makespan_finishes_the_batch_no_later(quoted: dict[str, Any]) -> None:
    makespan = quoted["makespan_h"]
    assert makespan["aware makespan"] <= makespan["agnostic makespan"]


def test_aware_finish_time_fairness_has_the_lower_worst_rho(quoted: dict[str, Any]) -> None:
    worst = quoted["rho_max"]
    assert worst["aware FTF"] <= worst["agnostic FTF"]


def test_each_policy_lands_at_or_below_gavels_own_simulator(quoted: dict[str, Any]) -> None:
    against = quoted["against_gavel_jct_h"]
    assert set(against) == {"max_min_fairness", "water_filling", "finish_time_fairness"}
    for figures in against.values():
        assert figures["apportion"] <= figures["gavel"]


def test_the_capacity_bounds_put_type_blind_below_aware(quoted: dict[str, Any]) -> None:
    bounds = quoted["capacity_jobs_per_h"]
    # Gavel's mix on 36 / 36 / 36: about 2.8 jobs/h at best, 2.3 at every job's mean speed.
    assert 2.0 < bounds["type-blind"] < bounds["aware"] < 3.5


def test_the_queue_is_counted_for_every_policy(quoted: dict[str, Any]) -> None:
    assert quoted["queue_load"] in {float(load) for load in quoted["load_ratio"]}
    assert set(quoted["queue"]) == {"agnostic max-min", "aware max-min", "aware + space sharing"}
    for counts in quoted["queue"].values():
        assert 0 < counts["at_a_third"] and 0 <= counts["at_last_arrival"]
