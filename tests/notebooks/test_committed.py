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


def _ratio(value: float) -> str:
    return f"×{value:.2f}"


def _contention(q: dict[str, Any]) -> list[str]:
    swept = [t for t in q["traces"].values() if "dominated_by" in t]
    episodes = [t["vs_plain"] for t in q["traces"].values() if "dominated_by" not in t]
    figures = [f"W1 = {q['tuned_w1']:g}", f"{q['levels']} priority levels"]
    figures.append(f"{len(episodes)} training episodes")
    for key in ("vs_plain", "deepshare_model_vs_plain", "vs_packed"):
        figures += [f"{_ratio(t[key]['mean'])} and {_ratio(t[key]['p99'])}" for t in swept]
    for stat in ("mean", "p99"):
        values = [e[stat] for e in episodes]
        figures.append(f"{_ratio(min(values))}–{max(values):.2f}")
    points = [beaten for t in swept for beaten in t["dominated_by"].values()]
    figures.append(f"{sum(1 for b in points if b)} of {len(points)} points")
    windows = q["windows"]
    figures.append(f"{windows['count']} random windows of {windows['jobs']} jobs")
    figures += [f"{c['mean']:.3f}× and {c['p99']:.3f}×" for c in windows["cells"]]
    return figures


#: The deadline study's baselines, as its headline names them.
_BASELINES = {"chronus_one_by_one": "Chronus's one-by-one admission", "edf": "EDF", "srtf": "SRTF"}


def _deadlines(q: dict[str, Any]) -> list[str]:
    claims, runs = q["claims"], q["runs"]
    ours = {key.split(".")[0] for key in runs[0] if key.startswith("deadline_admission")}
    figures = [
        f"{claims['claims_met']} of {claims['cells']} cells",
        f"{claims['guarantees_broken_total']} guarantees broken",
        f"{claims['guaranteed_missed_total']} guaranteed jobs missing",
        f"all {len(ours) * len(runs)} of its runs",
        f"at most {claims['worst_best_effort_jct_vs_srtf']:.3f}×",
        f"{claims['largest_call_p95_s']:.3f} s",
    ]

    def margin(run: dict[str, Any]) -> float:
        best = max(run[f"{p}.satisfaction"] for p in _BASELINES)
        return float(run["deadline_admission.satisfaction"] - best)

    worst = min(runs, key=margin)
    best = max(_BASELINES, key=lambda p: worst[f"{p}.satisfaction"])
    if claims["worst_satisfaction_margin"] >= 0:
        figures.append("at or above the best baseline's in every cell")
    else:
        figures += [
            f"{worst['trace']} at {worst['gpus']} GPUs",
            f"{-claims['worst_satisfaction_margin']:.4f} below the best baseline",
            f"{worst['deadline_admission.satisfaction']:.4f} against "
            f"{worst[f'{best}.satisfaction']:.4f} for {_BASELINES[best]}",
        ]
    smallest = [r for r in runs if r["gpus"] == min(q["gpus"])]
    figures.append(f"at {smallest[0]['gpus']} GPUs")
    for policy in ("deadline_admission", "srtf", "edf"):
        *first, last = (f"{r[f'{policy}.satisfaction']:.3f}" for r in smallest)
        figures.append(f"{', '.join(first)} and {last}")
    return figures


def _elasticity(q: dict[str, Any]) -> list[str]:
    saturn, philly = q["families"]["saturn"], q["families"]["philly"]

    def both(pattern: str, value: Callable[[dict[str, Any]], float]) -> str:
        return f"{pattern.format(value(saturn))} and {pattern.format(value(philly))}"

    rigid, ones = "rigid:max_min_fairness", q["ones"]
    ratios = [w["sia_over_ones"] for w in q["workloads"].values()]
    return [
        both("{:.2f}", lambda f: f["sia"]["avg JCT h"]) + " h",
        both("{:+.0f} %", lambda f: 100 * (f["sia_vs_paper_sia"] - 1)),
        both("{:g}", lambda f: f["paper_sia_h"]) + " h",
        both("{:.2f}×", lambda f: f["ones_vs_sia"]),
        both("{:.2f}", lambda f: f[ones]["avg JCT h"]) + " h",
        f"{saturn['sia_at_most_ones']} of {saturn['workloads']} Saturn and "
        f"{philly['sia_at_most_ones']} of {philly['workloads']} Philly workloads",
        f"from {min(ratios):.2f} to {max(ratios):.2f}",
        both("{:.2f}×", lambda f: f["rigid_vs_sia"]),
        both("{:.2f}", lambda f: f[rigid]["avg JCT h"]) + " h",
        both("{:+.0f} %", lambda f: 100 * (f["rigid_vs_paper_gavel"] - 1)),
        both("{:g}", lambda f: f["paper_gavel_h"]) + " h",
    ]


def _estimation(q: dict[str, Any]) -> list[str]:
    three = q["pairs"]["3"]

    def run(trace: str, estimator: str) -> dict[str, Any]:
        match = (trace, 0.3, estimator)
        return next(r for r in q["noise"] if (r["trace"], r["sigma"], r["estimator"]) == match)

    figures = [
        f"{three['ours']:.3f} against {three['naive']:.3f}",
        f"**{three['ours ÷ naive']:.2f}×**",
        f"{q['pairs']['1']['ours ÷ naive']:.2f}×",
        f"{100 * three['in 95 % interval']:.1f} %",
    ]
    gavel, poisson = q["jobs"]
    figures += [f"**{run(t, 'online')['jct_vs_oracle']:.4f}×**" for t in (gavel, poisson)]
    figures.append(
        " and ".join(f"{run(t, 'none')['jct_vs_oracle']:.4f}×" for t in (gavel, poisson))
    )
    for trace in (gavel, poisson):
        figures += [f"{run(trace, e)['worst_share']:.2f}" for e in ("oracle", "none", "online")]
    figures += [f"{run(t, 'robust')['jct_vs_oracle']:.4f}×" for t in (gavel, poisson)]
    figures += [f"{run(t, 'robust')['worst_share']:.2f}" for t in (gavel, poisson)]
    margin = q["margin"]

    def told(belief: str, level: float | None) -> dict[str, Any]:
        return next(r for r in margin["runs"] if (r["belief"], r["level"]) == (belief, level))

    figures += [
        f"**{told('kept', None)['broken']} guarantees broken**",
        f"{told('kept', 0.999)['satisfaction']:.3f}",
        f"{told('online', 0.999)['satisfaction']:.3f}",
        f"{margin['oracle_satisfaction']:.3f}",
    ]
    return figures


def _tiresias(q: dict[str, Any]) -> list[str]:
    runs = q["policies"]
    philly = q["windows"]["settings"]["philly 32"]["pooled"]["2d_las"]
    return [
        f"{q['las_vs_yarn_mean']:.2f}×",
        f"{runs['2D-LAS']['jct_mean_h']:.2f} h against {runs['YARN-CS']['jct_mean_h']:.2f} h",
        f"median {q['las_vs_yarn_median']:.1f}×",
        f"2D-Gittins averages {runs['2D-Gittins']['jct_mean_h']:.2f} h",
        f"{runs['2D-LAS exact']['jct_mean_h']:.2f} h against greedy 2D-LAS's",
        f"{runs['2D-LAS exact']['preemptions']:.0f} preemptions against "
        f"{runs['2D-LAS']['preemptions']:.0f}",
        f"{q['windows']['count']} random windows of {q['windows']['jobs']['philly']}",
        f"{philly['vs_yarn']:.2f}× YARN-CS's but {philly['pooled_vs_plain']:.2f}× SRTF's",
        f"(worst window {philly['worst_vs_plain']:.2f}×)",
    ]


#: Per notebook, the figures its first cell must state, read from its saved quote (a notebook
#: joins by adding its entry here).
HEADLINES: dict[str, Callable[[dict[str, Any]], list[str]]] = {
    "heterogeneity.ipynb": _heterogeneity,
    "hierarchical_fairness.ipynb": _hierarchical,
    "explore_your_cluster.ipynb": _explore,
    "contention.ipynb": _contention,
    "deadlines.ipynb": _deadlines,
    "elasticity.ipynb": _elasticity,
    "estimation.ipynb": _estimation,
    "tiresias.ipynb": _tiresias,
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
