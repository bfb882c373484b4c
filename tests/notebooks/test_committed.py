"""The notebooks as committed (read, not executed): their saved outputs are from the full size,
every code cell ran without an error, and the first cell states the headline number that the
saved outputs quote. The suite executes each notebook at its small size elsewhere; this keeps
the page a reader opens honest about what it shows."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import nbformat
import pytest

from tests.notebooks.kernel import NOTEBOOKS, code_cells, text


def _percent(value: float) -> str:
    return f"{100 * value:.1f} %"


def _heterogeneity(q: dict[str, Any]) -> list[str]:
    queue = q["queue"]
    load = f"{q['queue_load']:g}"
    return [
        f"{q['capacity_jobs_per_h']['aware']:.2f}",
        f"{q['capacity_jobs_per_h']['type-blind']:.2f}",
        f"{load} jobs/h",
        str(queue["agnostic max-min"]["at_last_arrival"]),
        str(queue["aware max-min"]["at_last_arrival"]),
        f"{q['load_ratio'][load]:.2f}×",
        f"{q['physical_ratio']:.2f}×",
    ]


def _hierarchical(q: dict[str, Any]) -> list[str]:
    shares = [_percent(v) for v in q["delivered_share"].values()]
    return [*shares, f"**{_percent(q['max_relative_error'])}**"]


def _explore(q: dict[str, Any]) -> list[str]:
    policies = q["policies"]
    ratio = policies["max throughput"]["throughput"] / policies["max-min"]["throughput"]
    curves = q["water_filling"]
    return [
        f"**{ratio:.2f}×**",
        f"{q['slo']['cost_at_tightest']:.2f}/h",
        f"{q['slo']['tightest_all_met_slack']:.2f}×",
        f"{curves['max-min, one LP']['median']:.3f}",
        f"{curves['water filling']['median']:.3f}",
    ]


def _contention(q: dict[str, Any]) -> list[str]:
    figures = []
    for trace in q["traces"].values():
        policies, claims = trace["policies"], trace["claims"]
        mine = policies[f"W1={q['recommended_w1']:g}"]
        figures += [
            f"{mine['jct_mean_h']:.2f} h",
            f"{claims['W1=0_over_recommended_jct_mean_h']:.2f}×",
            f"{claims['LAS_over_recommended_jct_mean_h']:.2f}×",
            f"{policies['SRTF']['jct_mean_h']:.2f} h",
        ]
    first = next(iter(q["traces"].values()))["policies"]
    mine = first[f"W1={q['recommended_w1']:g}"]
    return [*figures, f"{first['SRTF']['jct_p90_h']:.2f} h", f"{mine['jct_p90_h']:.2f} h"]


def _deadlines(q: dict[str, Any]) -> list[str]:
    claims = q["claims"]
    figures = [f"**{claims['guarantees_broken_total']}**"]
    smallest = min(q["gpus"])
    for run in (r for r in q["runs"] if r["gpus"] == smallest):
        figures += [
            f"{run[f'{p}.deadlines_met_%']:.1f} %" for p in ("deadline_admission", "edf", "srtf")
        ]
        ratio = claims["smallest_cluster"][run["trace"]]["edf_over_admission_best_effort_jct"]
        figures.append(f"{ratio:.2f}×")
    return figures


#: Per notebook, the figures its first cell must state, read from its saved quote (a notebook
#: joins by adding its entry here).
HEADLINES: dict[str, Callable[[dict[str, Any]], list[str]]] = {
    "heterogeneity.ipynb": _heterogeneity,
    "hierarchical_fairness.ipynb": _hierarchical,
    "explore_your_cluster.ipynb": _explore,
    "contention.ipynb": _contention,
    "deadlines.ipynb": _deadlines,
}


def _saved_quote(notebook: Any) -> dict[str, Any]:
    printed = text(list(code_cells(notebook))[-1]).strip().splitlines()
    assert printed, "the last cell's output was not saved"
    quote: dict[str, Any] = json.loads(printed[-1])
    return quote


@pytest.mark.parametrize("name", sorted(HEADLINES))
def test_saved_outputs_are_full_size_and_the_first_cell_quotes_them(name: str) -> None:
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    for cell in code_cells(notebook):
        assert cell.execution_count is not None, cell.source[:60]
        assert all(output.get("output_type") != "error" for output in cell.outputs)
    quote = _saved_quote(notebook)
    assert quote["size"] == "full"
    first = notebook.cells[0]
    assert first.cell_type == "markdown" and "**Headline**" in first.source
    flat = " ".join(first.source.split())
    for figure in HEADLINES[name](quote):
        assert figure in flat, (figure, flat)


def test_the_saved_heterogeneity_run_shows_the_agnostic_queue_running_away() -> None:
    quote = _saved_quote(nbformat.read(NOTEBOOKS / "heterogeneity.ipynb", as_version=4))
    bounds = quote["capacity_jobs_per_h"]
    assert bounds["type-blind"] < quote["queue_load"] < bounds["aware"]
    agnostic, aware = quote["queue"]["agnostic max-min"], quote["queue"]["aware max-min"]
    agnostic_growth = agnostic["at_last_arrival"] / agnostic["at_a_third"]
    aware_growth = aware["at_last_arrival"] / aware["at_a_third"]
    assert agnostic_growth > 1.3 and agnostic_growth > aware_growth + 0.2
    jct = quote["load_jct_h"]
    loads = sorted(jct["agnostic max-min"], key=float)
    # The agnostic JCT climbs past its bound; the aware one stays lower at every load.
    assert jct["agnostic max-min"][loads[-1]] > 1.5 * jct["agnostic max-min"][loads[0]]
    assert all(jct["aware max-min"][x] < jct["agnostic max-min"][x] for x in loads)
