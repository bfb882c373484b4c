"""notebooks/deadlines.ipynb in a real kernel at its small size: every plot is drawn, and the
numbers it quotes say what Chronus says: admission breaks none of its guarantees, and on an
overloaded cluster it meets more deadlines than EDF, whose best-effort jobs wait longer."""

from __future__ import annotations

from typing import Any

import pytest

from tests.notebooks.kernel import code_cells, execute, images
from tests.notebooks.kernel import quoted as read_quoted


@pytest.fixture(scope="module")
def notebook() -> Any:
    return execute("deadlines.ipynb")


@pytest.fixture(scope="module")
def quoted(notebook: Any) -> dict[str, Any]:
    return read_quoted(notebook)


def test_every_plotting_cell_shows_its_figure(notebook: Any) -> None:
    plotting = [cell for cell in code_cells(notebook) if "plt.show()" in cell.source]
    assert len(plotting) == 2  # the sweep's panels, the lateness CDF
    assert [images(cell) for cell in plotting] == [1, 1]


def test_it_ran_at_the_small_size_on_every_cluster(quoted: dict[str, Any]) -> None:
    assert quoted["size"] == "small"
    assert [(r["trace"], r["gpus"]) for r in quoted["runs"]] == [
        ("MIX2", 32),
        ("MIX2", 24),
        ("MIX2", 16),
    ]


def test_admission_breaks_no_guarantee(quoted: dict[str, Any]) -> None:
    assert [r["guarantees_broken"] for r in quoted["runs"]] == [0, 0, 0]
    assert [r["guaranteed_missed"] for r in quoted["runs"]] == [0, 0, 0]
    assert quoted["claims"]["guarantees_broken_total"] == 0


def test_on_the_smallest_cluster_admission_meets_more_deadlines_than_edf(
    quoted: dict[str, Any],
) -> None:
    smallest = quoted["runs"][-1]
    assert smallest["gpus"] == 16
    admission = smallest["deadline_admission.deadlines_met_%"]
    assert admission > smallest["edf.deadlines_met_%"]
    assert smallest["deadline_admission.value_%"] > smallest["edf.value_%"]
    # ... and EDF keeps best-effort jobs waiting longer than admission does.
    assert smallest["edf.best_effort_jct_h"] > smallest["deadline_admission.best_effort_jct_h"]
    claims = quoted["claims"]["smallest_cluster"]["MIX2"]
    assert claims["met_minus_edf_pp"] == pytest.approx(admission - smallest["edf.deadlines_met_%"])


def test_shrinking_the_cluster_never_helps_edf(quoted: dict[str, Any]) -> None:
    met = [r["edf.deadlines_met_%"] for r in quoted["runs"]]  # 32, 24, 16 GPUs
    assert met == sorted(met, reverse=True)
    assert met[0] > met[-1]
