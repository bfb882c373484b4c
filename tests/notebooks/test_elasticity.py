"""notebooks/elasticity.ipynb in a real kernel at its small size: its three plots are drawn, and
the numbers it quotes say what its text says: on Sia's workloads `sia` finishes jobs sooner on
average than rigid jobs under Gavel's max-min and than ONES's scheduler, workload by workload,
and under the heaviest load it stays ahead of both."""

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
    # Table 3 per workload, sia ÷ the baselines per workload, JCT against load
    assert [images(cell) for cell in plotting] == [1, 1, 1]


def test_it_ran_at_the_small_size(quoted: dict[str, Any]) -> None:
    assert quoted["size"] == "small"
    assert set(quoted["families"]) == {"saturn", "philly"}
    assert set(quoted["workloads"]) == {"saturn 1", "philly 1"}


@pytest.mark.parametrize("family", ["saturn", "philly"])
def test_sia_beats_rigid_and_ones(quoted: dict[str, Any], family: str) -> None:
    numbers = quoted["families"][family]
    sia = numbers["sia"]
    assert sia["avg JCT h"] < numbers["rigid:max_min_fairness"]["avg JCT h"]
    assert sia["avg JCT h"] < numbers[quoted["ones"]]["avg JCT h"]
    assert numbers["ones_vs_sia"] > 1 and numbers["rigid_vs_sia"] > 1


def test_the_per_workload_verdict_counts_the_workloads_it_lists(quoted: dict[str, Any]) -> None:
    for family, numbers in quoted["families"].items():
        mine = [w for name, w in quoted["workloads"].items() if name.startswith(family)]
        assert numbers["workloads"] == len(mine)
        assert numbers["sia_at_most_ones"] == sum(w["sia_h"] <= w["ones_h"] for w in mine)
        for w in mine:
            assert w["sia_over_ones"] == pytest.approx(w["sia_h"] / w["ones_h"], rel=0.02)


def test_under_the_heaviest_load_sia_stays_ahead(quoted: dict[str, Any]) -> None:
    heaviest = quoted["load"][max(quoted["load"], key=int)]
    assert heaviest["sia (MILP)"] < heaviest["rigid max-min (Gavel)"]
    assert heaviest["sia (MILP)"] < heaviest["ONES"]
