"""simulator.deadline_study: every variant on every (trace, cluster) under the same mechanics,
and the claims computed per (trace, cluster) from a table whose margins are worked out by hand."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from apportion.simulator import deadline_study as study
from apportion.simulator.config import Mode


def test_every_variant_runs_on_every_trace_and_size_under_the_same_mechanics() -> None:
    traces = {"MIX2": study.TRACES["MIX2"], "SLO": study.TRACES["SLO"]}
    runs = study.runs(traces, (16, 48), jobs=30)
    assert len(runs) == 2 * 2 * len(study.VARIANTS)
    labels = study.labels(runs, traces)
    assert [(x["trace"], x["gpus"]) for x in labels[:: len(study.VARIANTS)]] == [
        ("MIX2", 16),
        ("MIX2", 48),
        ("SLO", 16),
        ("SLO", 48),
    ]
    assert [x["policy"] for x in labels[: len(study.VARIANTS)]] == [v.label for v in study.VARIANTS]
    for run in runs:
        assert run.config.mode is Mode.LEASES
        assert run.config.lease_seconds == study.LEASE_SECONDS
        assert run.config.overhead_model == "chronus"
        assert run.trace.jobs == 30 and run.trace.gpus_per_node == 8
    calls = {(x["policy"], run.config.call_seconds) for x, run in zip(labels, runs, strict=True)}
    assert (study.OURS, None) in calls  # the deployment's setting: asked on every event
    assert (f"{study.OURS} every 5 min", 300.0) in calls
    assert (f"{study.OURS} every lease", study.LEASE_SECONDS) in calls
    # Spreading arrivals depends on the trace alone: every size of a trace sees the same jobs.
    assert (
        len({run.trace.load for run in runs if str(run.trace.source).endswith("mix2_first2h.csv")})
        == 1
    )


def entry(
    policy: str, satisfaction: float, first: float, jct: float | None, **more: Any
) -> dict[str, Any]:
    return {
        "trace": "T",
        "gpus": 16,
        "policy": policy,
        "satisfaction": satisfaction,
        "first_deadline_met": first,
        "best_effort_jct_h": jct,
        "guarantees_broken": more.get("broken", 0),
        "guaranteed_missed": more.get("missed", 0),
    }


def frame(ours: float, ours_first: float, ours_jct: float, broken_5min: int = 0) -> pd.DataFrame:
    return pd.DataFrame(
        [
            entry(study.OURS, ours, ours_first, ours_jct),
            entry(f"{study.OURS} every 5 min", 0.5, 0.5, 9.0, broken=broken_5min),
            entry(f"{study.OURS} every lease", 0.4, 0.4, 9.0),
            entry("chronus_one_by_one", 0.90, 0.80, 3.0),
            entry("edf", 0.85, 0.84, 4.0),
            entry("srtf", 0.70, 0.60, 2.0),
        ]
    )


def test_the_claims_hold_when_every_margin_does() -> None:
    (claim,) = study.targets(frame(0.92, 0.84, 2.2)).to_dict("records")
    assert claim["best_baseline"] == "chronus_one_by_one"
    assert claim["satisfaction_margin"] == pytest.approx(0.02)
    assert claim["first_met_margin_vs_edf"] == pytest.approx(0.0)
    assert claim["best_effort_jct_vs_srtf"] == pytest.approx(1.1)
    assert claim["broken_any_frequency"] == 0 and claim["met"]


@pytest.mark.parametrize(
    ("ours", "first", "jct", "broken"),
    [
        (0.89, 0.90, 2.0, 0),  # satisfaction 0.01 below one-by-one's
        (0.95, 0.83, 2.0, 0),  # first deadlines 0.01 below EDF's
        (0.95, 0.90, 2.3, 0),  # best-effort JCT 1.15 × SRTF's
        (0.95, 0.90, 2.0, 1),  # a guarantee broken when asked every 5 minutes
    ],
)
def test_each_missed_claim_fails_its_cell(
    ours: float, first: float, jct: float, broken: int
) -> None:
    (claim,) = study.targets(frame(ours, first, jct, broken)).to_dict("records")
    assert not claim["met"]
    assert claim["broken_any_frequency"] == broken
