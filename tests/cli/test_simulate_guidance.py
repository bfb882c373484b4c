"""`solve simulate` tells a newcomer what went wrong or what to try: a near policy name, a table
given in the wrong format, a cluster far larger than the trace, and a Gavel-format example file
to try `--throughputs` with."""

from __future__ import annotations

import ast
import csv
import json
from pathlib import Path

from apportion.refdata import SOURCE
from apportion.refdata.gavel import GavelTable
from tests.cli_runner import invoke

SAMPLE = SOURCE / "gavel_throughputs_sample.json"
OWN_TABLE = SOURCE / "gavel_throughputs.json"


def test_a_misspelled_policy_is_answered_with_the_nearest_names() -> None:
    ran = invoke(["simulate", "gavel", "--policy", "max_min_fairnes,srtff,fifo"])
    assert ran.exit_code == 2
    assert "unknown policy 'max_min_fairnes' (did you mean 'max_min_fairness'?)" in ran.stderr
    assert "'srtff' (did you mean 'srtf'?)" in ran.stderr
    assert len(ran.stderr.strip().splitlines()) == 1


def test_an_empty_list_names_the_flag_in_every_world() -> None:
    for args in (
        ["gavel", "--policy", ""],
        ["chronus", "--policy", " , "],
        ["sia", "--policy", ""],
        ["gavel", "--seed", ""],
    ):
        ran = invoke(["simulate", *args])
        assert ran.exit_code == 2, args
        (line,) = ran.stderr.strip().splitlines()
        assert f"{args[1]} {args[2]!r}: give at least one value" in line


def test_the_projects_own_table_given_as_gavels_names_both_formats() -> None:
    ran = invoke(["simulate", "gavel", "--throughputs", str(OWN_TABLE)])
    assert ran.exit_code == 2 and "Traceback" not in ran.stderr
    (line,) = ran.stderr.strip().splitlines()
    assert "apportion's own format" in line and "leave --throughputs out" in line
    assert "Gavel's format" in line and SAMPLE.name in line


def test_the_bundled_sample_is_gavels_table_for_three_models() -> None:
    """Every isolated throughput of the sample is the bundled table's for that job type (the
    table was built from the same Gavel file), at every scale factor the generator draws."""
    sample = json.loads(SAMPLE.read_text())
    table = GavelTable.from_compact(json.loads(OWN_TABLE.read_text()))
    types = {ast.literal_eval(key) for entries in sample.values() for key in entries}
    assert {model for model, _ in types} == {
        "ResNet-50 (batch size 64)",
        "Transformer (batch size 64)",
        "LM (batch size 20)",
    }
    assert {scale for _, scale in types} == {1, 2, 4, 8}
    for worker, entries in sample.items():
        for key, entry in entries.items():
            expected = table.throughput(ast.literal_eval(key)).get(worker, 0.0)
            assert abs(entry["null"] - expected) <= 1e-9 * max(1.0, expected), (worker, key)


def test_a_poisson_trace_runs_on_the_sample_and_draws_only_its_models(tmp_path: Path) -> None:
    records = tmp_path / "records.csv"
    args = ["simulate", "poisson", "1", "--jobs", "30", "--cluster", "8:8:8"]
    ran = invoke([*args, "--throughputs", str(SAMPLE), "--output", str(records), "--no-progress"])
    assert ran.exit_code == 0, ran.stderr
    with records.open() as rows:
        drawn = {row["workload_class"] for row in csv.DictReader(rows)}
    assert drawn and drawn <= {
        "ResNet-50 (batch size 64)",
        "Transformer (batch size 64)",
        "LM (batch size 20)",
    }


def test_a_nearly_idle_cluster_is_said_with_a_cluster_that_is_busier() -> None:
    run = ["--jobs", "40", "--policy", "edf", "--format", "json", "--no-progress"]
    ran = invoke(["simulate", "chronus", *run])
    assert ran.exit_code == 0, ran.stderr
    (row,) = json.loads(ran.stdout)  # the note goes to stderr: stdout stays JSON
    assert row["utilization"] < 0.05
    assert f"note: the cluster was {100 * row['utilization']:.1f} % used" in ran.stderr
    suggested = ran.stderr.split("--cluster ")[1].split()[0]
    again = invoke(["simulate", "chronus", *run, "--cluster", suggested])
    assert again.exit_code == 0, again.stderr
    (busier,) = json.loads(again.stdout)
    assert busier["finished"] == row["finished"] == 40
    assert busier["utilization"] > 5 * row["utilization"]
    assert "note:" not in again.stderr
