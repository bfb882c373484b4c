"""notebooks/elasticity.ipynb in a real kernel at its small size: both plots are drawn, and the
numbers it quotes say what its text says: on Sia's workloads the Sia-style policies finish jobs
sooner on average than rigid jobs under Gavel's max-min and than ONES's evolutionary search, and
under the heaviest load they stay ahead of both."""

from __future__ import annotations

from typing import Any

import pytest

from tests.notebooks.kernel import code_cells, execute, images
from tests.notebooks.kernel import quoted as read_quoted


@pytest.fixture(scope="module")
def notebook() -> Any:
    return execute("elasticity.ipynb", timeout=1200)


@pytest.fixture(scope="module")
def quoted(notebook: Any) -> dict[str, Any]:
    return read_quoted(notebook)


def test_every_plotting_cell_shows_its_figure(notebook: Any) -> None:
    plotting = [cell for cell in code_cells(notebook) if "plt.show()" in cell.source]
    assert [images(cell) for cell in plotting] == [1, 1]  # Table 3 bars, JCT against load


def test_it_ran_at_the_small_size(quoted: dict[str, Any]) -> None:
    assert quoted["size"] == "small"
    assert set(quoted["families"]) == {"saturn", "philly"}


@pytest.mark.parametrize("family", ["saturn", "philly"])
def test_elastic_beats_rigid_and_ones_search(quoted: dict[str, Any], family: str) -> None:
    numbers = quoted["families"][family]
    best = numbers[numbers["best_elastic"]]["avg JCT h"]
    assert best < numbers["rigid:max_min_fairness"]["avg JCT h"]
    assert numbers["best_elastic_on_search_workloads_h"] < numbers["ones_search"]["avg JCT h"]
    # and the tail with it
    assert numbers[numbers["best_elastic"]]["p99 JCT h"] < numbers["ones_search"]["p99 JCT h"]


def test_under_the_heaviest_load_sia_stays_ahead(quoted: dict[str, Any]) -> None:
    heaviest = quoted["load"][max(quoted["load"], key=int)]
    assert heaviest["sia (MILP)"] < heaviest["rigid max-min (Gavel)"]
    assert heaviest["sia (MILP)"] < heaviest["ONES search"]
