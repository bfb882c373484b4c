"""Bad input on the command line: every problem is reported, in one line with exit code 2, as
the HTTP API lists them (snapshot, policy and options together; no "and N more")."""

from __future__ import annotations

import json
from pathlib import Path

from fastapi.testclient import TestClient

from apportion.api.main import app
from tests.cli_runner import invoke

BAD = {
    "gpu_types": [{"name": "v100", "count": -1}, {"name": "k80", "count": 2}],
    "jobs": [{"id": f"job-{i}", "scale_factor": 0, "throughput": {"v100": -1.0}} for i in range(4)],
}


def test_every_error_is_on_the_one_line_the_api_lists(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(BAD))
    options = {"pareto": "maybe", "bogus": 1}
    ran = invoke([str(path), "-o", "pareto=maybe", "-o", "bogus=1"])
    assert ran.exit_code == 2 and ran.stdout == ""
    assert ran.stderr.count("\n") == 1 and "more" not in ran.stderr
    answer = TestClient(app).post(
        "/v1/solve", json={"policy": "max_min_fairness", "snapshot": BAD, "options": options}
    )
    assert answer.status_code == 422
    errors = answer.json()["errors"]
    assert len(errors) == 11  # 1 count, 4 scale factors, 4 throughputs, 2 options
    for error in errors:
        where = "".join(
            f"[{part}]" if isinstance(part, int) else f".{part}" for part in error["loc"][1:]
        ).lstrip(".")
        assert f"{where}: {error['msg']}" in ran.stderr, (where, ran.stderr)
    assert ran.stderr.count(";") == len(errors) - 1


def test_simulate_reports_every_bad_argument() -> None:
    ran = invoke(
        ["simulate", "gavel", "--policy", "nope,gandiva", "--seed", "x", "--load", "z",
         "--cluster", "1:2", "--throughputs", "/no/such.json"]
    )  # fmt: skip
    assert ran.exit_code == 2 and ran.stderr.count("\n") == 1
    for expected in (
        "unknown policy 'nope'",
        "Gavel's policy 'gandiva' has no counterpart here",
        "--seed 'x'",
        "--load 'z'",
        "--cluster '1:2'",
        "--throughputs /no/such.json",
    ):
        assert expected in ran.stderr, (expected, ran.stderr)


def test_simulate_help_gives_every_default() -> None:
    ran = invoke(["simulate", "--help"])
    assert ran.exit_code == 0
    text = " ".join(ran.stdout.split())  # argparse wraps lines
    for expected in (
        "(default: max_min_fairness)",
        "(default: auto)",
        "(default: 360.0)",
        "(default: deficit)",
        "(default: types)",
        "(default: 1200.0)",
        "(default: 0.0)",
        "(default: 0)",
        "(default: one per core)",
        "(default: the bundled copy of Gavel's table)",
    ):
        assert expected in text, expected
