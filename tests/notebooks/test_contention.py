"""notebooks/contention.ipynb in a real kernel at its small size: every plot is drawn, and the
numbers it quotes say what its text says: at DeepShare's recommended W1 the contention penalty
shortens average JCT against the contention-blind placement (W1 = 0) and against LAS, by
cutting the slowdown jobs suffer; a heavier penalty idles GPUs; LAS and SRTF (which consolidate
gangs and preempt for free in this simulator) keep the shorter tail, SRTF close on average."""

from __future__ import annotations

from typing import Any

import pytest

from tests.notebooks.kernel import code_cells, execute, images
from tests.notebooks.kernel import quoted as read_quoted


@pytest.fixture(scope="module")
def notebook() -> Any:
    return execute("contention.ipynb")


@pytest.fixture(scope="module")
def quoted(notebook: Any) -> dict[str, Any]:
    return read_quoted(notebook)


@pytest.fixture(scope="module")
def policies(quoted: dict[str, Any]) -> dict[str, dict[str, float]]:
    table: dict[str, dict[str, float]] = quoted["traces"]["real trace0"]["policies"]
    return table


def test_every_plotting_cell_shows_its_figure(notebook: Any) -> None:
    plotting = [cell for cell in code_cells(notebook) if "plt.show()" in cell.source]
    assert len(plotting) == 2  # the W1 trade-off curves, the JCT CDF and slowdown
    assert [images(cell) for cell in plotting] == [1, 1]


def test_it_ran_at_the_small_size(quoted: dict[str, Any]) -> None:
    assert quoted["size"] == "small"
    assert list(quoted["traces"]) == ["real trace0"]
    assert quoted["recommended_w1"] in quoted["w1"] and 0.0 in quoted["w1"]


def test_the_penalty_shortens_average_jct_against_w1_0_and_las(
    policies: dict[str, dict[str, float]], quoted: dict[str, Any]
) -> None:
    penalized = policies[f"W1={quoted['recommended_w1']:g}"]
    # "cuts average JCT by 15 % or more"
    assert penalized["jct_mean_h"] <= 0.85 * policies["W1=0"]["jct_mean_h"]
    assert penalized["jct_mean_h"] <= 0.85 * policies["LAS"]["jct_mean_h"]
    # ... because the jobs it starts run closer to their speed alone.
    assert penalized["slowdown"] < policies["W1=0"]["slowdown"]


def test_a_heavier_penalty_idles_gpus(
    policies: dict[str, dict[str, float]], quoted: dict[str, Any]
) -> None:
    heavier = [w for w in quoted["w1"] if w >= quoted["recommended_w1"]]
    utilization = [policies[f"W1={w:g}"]["utilization_%"] for w in heavier]
    assert utilization == sorted(utilization, reverse=True)
    assert utilization[-1] < utilization[0]
    claims = quoted["traces"]["real trace0"]["claims"]
    assert claims["utilization_never_rises_past_recommended_w1"] is True


def test_the_baselines_keep_the_tail_and_srtf_stays_close_on_average(
    policies: dict[str, dict[str, float]], quoted: dict[str, Any]
) -> None:
    swept = [policies[f"W1={w:g}"] for w in quoted["w1"]]
    for baseline in ("LAS", "SRTF"):
        assert policies[baseline]["jct_p90_h"] < min(p["jct_p90_h"] for p in swept)
        # Their gangs sit on the fewest nodes, so they never contend.
        assert policies[baseline]["slowdown"] == pytest.approx(1.0)
    penalized = policies[f"W1={quoted['recommended_w1']:g}"]["jct_mean_h"]
    assert policies["SRTF"]["jct_mean_h"] / penalized > 0.85  # "within about 12 %"
