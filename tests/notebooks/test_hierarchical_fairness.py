"""notebooks/hierarchical_fairness.ipynb in a real kernel at its small size: both figures are
drawn, the three entities' shares of the cluster settle at 1 : 2 : 3 (within 5 %) and jobs
inside an entity share equally."""

from __future__ import annotations

from typing import Any

import pytest

from tests.notebooks.kernel import code_cells, execute, images
from tests.notebooks.kernel import quoted as read_quoted

TOLERANCE = 0.05


@pytest.fixture(scope="module")
def notebook() -> Any:
    return execute("hierarchical_fairness.ipynb")


@pytest.fixture(scope="module")
def quoted(notebook: Any) -> dict[str, Any]:
    return read_quoted(notebook)


def test_every_plotting_cell_shows_its_figure(notebook: Any) -> None:
    plotting = [cell for cell in code_cells(notebook) if "plt.show()" in cell.source]
    assert len(plotting) == 2  # entity shares over time, job shares inside each entity
    assert [images(cell) for cell in plotting] == [1] * len(plotting)


def test_it_ran_at_the_small_size(quoted: dict[str, Any]) -> None:
    assert quoted["size"] == "small"


def test_entities_receive_one_two_three_within_five_percent(quoted: dict[str, Any]) -> None:
    delivered, target = quoted["delivered_share"], quoted["target_share"]
    assert target == pytest.approx(
        {"entity-0": 1 / 6, "entity-1": 1 / 3, "entity-2": 1 / 2}, abs=1e-4
    )
    for entity, share in target.items():
        assert delivered[entity] == pytest.approx(share, rel=TOLERANCE)
    assert quoted["max_relative_error"] <= TOLERANCE


def test_the_policy_allocates_the_weights_exactly(quoted: dict[str, Any]) -> None:
    assert quoted["allocated_share"] == pytest.approx(quoted["target_share"], abs=1e-4)


def test_jobs_inside_an_entity_share_equally(quoted: dict[str, Any]) -> None:
    # Largest ÷ smallest job share within any entity over the final phase.
    assert quoted["max_job_spread_within_entity"] <= 1 + 2 * TOLERANCE
