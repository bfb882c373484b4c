"""The `solve` command, run as a real subprocess: output formats and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.command import run
from tests.conftest import FIXTURES

SNAPSHOT = FIXTURES / "gavel_physical_96.json"


def test_piped_output_is_json_and_exit_zero() -> None:
    done = run(str(SNAPSHOT))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "optimal"
    assert len(result["jobs"]) == 96


def test_table_format_shows_status_and_jobs() -> None:
    done = run(str(SNAPSHOT), "--format", "table")
    assert done.returncode == 0
    assert "max_min_fairness" in done.stdout and "optimal" in done.stdout
    assert "job-0" in done.stdout and "v100" in done.stdout


def test_output_file_and_policy_option(tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    done = run(
        str(SNAPSHOT),
        "--output",
        str(out),
        "--policy",
        "max_min_fairness",
        "-o",
        "heterogeneity_aware=false",
    )
    assert done.returncode == 0
    written = json.loads(out.read_text())
    assert written["policy"] == "max_min_fairness"
    assert written["objective"] > 0


def test_snapshot_from_stdin() -> None:
    data = {
        "gpu_types": [{"name": "v100", "count": 1}],
        "jobs": [{"id": "a", "throughput": {"v100": 2}}],
    }
    done = run("-", "--format", "json", stdin=json.dumps(data))
    assert done.returncode == 0
    assert json.loads(done.stdout)["jobs"][0]["allocation"] == {"v100": 1.0}


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ('{"gpu_types": [], "jobs": []}', "gpu_types: the cluster is empty"),
        (
            '{"gpu_types": [{"name": "a", "count": 1}], "jobs": [{"id": "x", "scale_factor": 0}]}',
            "jobs[0].scale_factor",
        ),
        ("{not json", "not valid JSON"),
    ],
)
def test_invalid_input_is_one_line_and_exit_two(payload: str, expected: str) -> None:
    done = run("-", stdin=payload)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0]
    assert "Traceback" not in done.stderr


def test_unknown_policy_and_option_exit_two() -> None:
    assert "unknown policy" in run(str(SNAPSHOT), "--policy", "nope").stderr
    done = run(str(SNAPSHOT), "-o", "bogus=1")
    assert done.returncode == 2 and "options.bogus" in done.stderr


def test_missing_file_exit_two() -> None:
    done = run("does-not-exist.json")
    assert done.returncode == 2 and "cannot read" in done.stderr


def test_solver_failure_exit_one() -> None:
    # A time limit no solver can meet: no allocation, no solution for a limit, exit code 1.
    done = run(
        str(FIXTURES / "gavel_mix_256.json"),
        "--time-limit",
        "1e-6",
        "-o",
        "lp_method=ipm",
        "-o",
        "merge_identical=false",
    )
    assert done.returncode == 1
    answer = json.loads(done.stdout)
    assert (answer["status"], answer["termination"]) == ("no_solution", "time_limit")


def test_schema_and_policy_list() -> None:
    schema = json.loads(run("--schema").stdout)
    assert "jobs" in schema["properties"]
    listing = run("--list-policies")
    assert listing.returncode == 0 and "max_min_fairness" in listing.stdout
