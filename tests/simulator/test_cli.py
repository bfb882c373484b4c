"""`solve simulate`: runs, sweeps, outputs and one-line errors with exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tests.cli_runner import invoke


def test_a_run_writes_records_series_and_summary(tmp_path: Path) -> None:
    records, series, summary = tmp_path / "r.csv", tmp_path / "ts.csv", tmp_path / "s.json"
    ran = invoke(
        [
            "simulate", "gavel", "--jobs", "10", "--policy", "max_min_fairness",
            "--output", str(records), "--timeseries", str(series), "--summary", str(summary),
            "--format", "json", "--preemption-seconds", "30",
        ]
    )  # fmt: skip
    assert ran.exit_code == 0, ran.stderr
    printed = json.loads(ran.stdout)
    assert printed == json.loads(summary.read_text())
    assert printed[0]["policy"] == "max_min_fairness" and printed[0]["finished"] == 10
    table = pd.read_csv(records)
    assert len(table) == 10 and table["finished"].all()
    assert pd.read_csv(series)["steps"].sum() == pytest.approx(table["steps_done"].sum())


def test_several_policies_make_a_sweep_with_a_table() -> None:
    ran = invoke(
        ["simulate", "gavel", "--jobs", "8", "--policy", "srtf,las", "--workers", "2",
         "--format", "table"]
    )  # fmt: skip
    assert ran.exit_code == 0, ran.stderr
    assert "srtf" in ran.stdout and "las" in ran.stdout and "JCT h" in ran.stdout


def test_a_poisson_trace_on_a_given_cluster() -> None:
    ran = invoke(
        ["simulate", "poisson", "30", "--jobs", "4", "--cluster", "v100=8,k80=8",
         "--policy", "srtf", "--format", "json", "--max-time", "7200"]
    )  # fmt: skip
    assert ran.exit_code == 0, ran.stderr
    row = json.loads(ran.stdout)[0]
    assert row["jobs"] == 4 and set(row) >= {"utilization_v100", "utilization_k80"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["simulate", "gavel", "--policy", "nope"], "unknown policy 'nope'"),
        (["simulate", "poisson"], "poisson needs a rate"),
        (["simulate", "gavel", "--cluster", "v100"], "--cluster"),
        (["simulate", "gavel", "/no/such.trace"], "no such trace file"),
        (["simulate", "gavel", "--resolve", "sometimes"], "unknown trigger"),
        (["simulate", "gavel", "--seed", "x"], "--seed"),
        (["simulate", "gavel", "--jobs", "3", "-o", "bogus=1"], "options.bogus"),
        (["simulate", "tiresias", "--cluster", "a=4,b=4"], "one GPU type"),
        (["simulate", "chronus", "--cluster", "gpu=12"], "whole nodes of 8"),
        (["simulate", "deepshare", "--policy", "srtf", "--mode", "rounds"], "only placement mode"),
        (["simulate", "deepshare", "--policy", "srtf", "-o", "placement=x"], "unknown style"),
    ],
)
def test_bad_input_is_one_line_and_exit_code_2(args: list[str], message: str) -> None:
    ran = invoke([*args, "--no-progress"])
    assert ran.exit_code == 2
    assert message in ran.stderr
    assert ran.stderr.count("\n") == 1


def test_deepshare_under_its_own_contention_model_reports_its_own_jct() -> None:
    """The first 16 jobs of DeepShare's trace0 with SRTF placed as DeepShare's baselines place,
    under DeepShare's contention model: the run time (its JCT, no queueing) is reported beside
    JCT, which counts the queueing of the jobs that wait for the first ones."""
    ran = invoke(
        ["simulate", "deepshare", "--jobs", "16", "--policy", "srtf", "--contention",
         "reference", "--round-seconds", "300", "--format", "json", "--no-progress"]
    )  # fmt: skip
    assert ran.exit_code == 0, ran.stderr
    row = json.loads(ran.stdout)[0]
    assert row["finished"] == 16
    assert 0 < row["run_time_mean"] < row["jct_mean"]
