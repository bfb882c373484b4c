"""notebooks/estimation.ipynb in a real kernel at its small size: both plots are drawn; leaving
one job type out of Gavel's co-location table, the estimate beats the naive guess at every
number of measured pairs and is within half of it at three; in the simulations, the three
arms coincide when the policy is told the truth (σ = 0, robust max-min included), the kept
first belief is off by what a lognormal error of σ gives (E|log error| = σ √(2/π)) and learning
online brings it below that; told remaining times with σ = 0.3, deadline admission is sent the
margin e^(σq) − 1 of each level and breaks no guarantee at q = 0.999."""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

import pytest

from tests.notebooks.kernel import code_cells, execute, images
from tests.notebooks.kernel import quoted as read_quoted


@pytest.fixture(scope="module")
def notebook() -> Any:
    return execute("estimation.ipynb")


@pytest.fixture(scope="module")
def quoted(notebook: Any) -> dict[str, Any]:
    return read_quoted(notebook)


def _runs(quoted: dict[str, Any], **match: Any) -> list[dict[str, Any]]:
    return [r for r in quoted["noise"] if all(r[k] == v for k, v in match.items())]


def test_every_plotting_cell_shows_its_figure(notebook: Any) -> None:
    plotting = [cell for cell in code_cells(notebook) if "plt.show()" in cell.source]
    assert [images(cell) for cell in plotting] == [1, 1, 1]


def test_it_ran_at_the_small_size(quoted: dict[str, Any]) -> None:
    assert quoted["size"] == "small"
    assert quoted["jobs"] == {"Gavel physical": 30, "Poisson 3/h": 30}
    assert quoted["sigmas"] == [0.0, 0.1, 0.3, 0.5]
    assert len(quoted["noise"]) == 2 * 4 * 4  # traces × σ × (three estimators, robust)
    assert quoted["margin"]["jobs"] == 120 and quoted["margin"]["gpus"] == 16


def test_the_estimate_beats_the_naive_guess_and_halves_it_at_three_pairs(
    quoted: dict[str, Any],
) -> None:
    for measured, row in quoted["pairs"].items():
        assert row["ours"] < row["naive"], measured
        assert row["ours ÷ naive"] == pytest.approx(row["ours"] / row["naive"], rel=1e-3)
    assert quoted["pairs"]["3"]["ours ÷ naive"] <= 0.5


def test_told_the_truth_every_estimator_runs_alike(quoted: dict[str, Any]) -> None:
    for trace in quoted["jobs"]:
        runs = _runs(quoted, trace=trace, sigma=0.0)
        assert {r["jct_h"] for r in runs} == {runs[0]["jct_h"]}, trace
        assert all(r["belief_error"] == 0 for r in runs)


def test_the_belief_errs_as_its_noise_says_and_learning_shrinks_it(
    quoted: dict[str, Any],
) -> None:
    for trace in quoted["jobs"]:
        for sigma in (0.1, 0.3, 0.5):
            expected = sigma * math.sqrt(2 / math.pi)  # E|N(0, σ²)|
            (oracle,) = _runs(quoted, trace=trace, sigma=sigma, estimator="oracle")
            (none,) = _runs(quoted, trace=trace, sigma=sigma, estimator="none")
            (online,) = _runs(quoted, trace=trace, sigma=sigma, estimator="online")
            assert oracle["belief_error"] == 0
            assert 0.6 * expected < none["belief_error"] < 1.4 * expected, (trace, sigma)
            assert online["belief_error"] < none["belief_error"], (trace, sigma)


def test_the_robust_column_is_filled(quoted: dict[str, Any]) -> None:
    assert {r["estimator"] for r in quoted["noise"]} == {"oracle", "none", "online", "robust"}
    for trace in quoted["jobs"]:
        for sigma in (0.1, 0.3, 0.5):
            (robust,) = _runs(quoted, trace=trace, sigma=sigma, estimator="robust")
            (none,) = _runs(quoted, trace=trace, sigma=sigma, estimator="none")
            # Told the same kept belief (the same draws): its error is the kept belief's.
            assert robust["belief_error"] == pytest.approx(none["belief_error"], rel=0.25)


def test_the_margin_is_derived_from_sigma_and_keeps_every_guarantee(
    quoted: dict[str, Any],
) -> None:
    margin = quoted["margin"]
    assert margin["sigma"] == 0.3
    assert len(margin["runs"]) == 2 * 4  # kept and online × (no margin, three levels)
    for run in margin["runs"]:
        level = run["level"]
        delta = 0.0 if level is None else math.expm1(0.3 * NormalDist().inv_cdf(level))
        assert run["margin"] == pytest.approx(delta, abs=1e-4), run
        if level == 0.999:
            assert run["broken"] == 0, run
