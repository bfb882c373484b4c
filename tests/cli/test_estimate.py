"""`solve estimate`: the document written, given back with --estimate, and bad input as one
line with exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.command import run
from tests.cli_runner import invoke


def test_the_document_is_written_and_taken_back(tmp_path: Path) -> None:
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"jobs": [{"id": "n", "profiles": {"v100": 10.0}}]}))
    kept = tmp_path / "estimate.json"
    ran = invoke(["estimate", str(request), "--output", str(kept)])
    assert ran.exit_code == 0, ran.output
    first = json.loads(kept.read_text())
    assert first["version"] == 1 and first["jobs"]["n"]["basis"] == "measured"
    seen = tmp_path / "seen.json"
    one_round = {"job": "n", "gpu_type": "k80", "steps": 1080.0, "seconds": 360.0}
    seen.write_text(json.dumps({"observations": [one_round]}))
    again = invoke(["estimate", str(seen), "--estimate", str(kept)])
    assert again.exit_code == 0, again.output
    later = json.loads(again.stdout)
    k80 = later["jobs"]["n"]["throughput"]["k80"]
    assert abs(k80["mean"] - 3.0) / 3.0 < 0.01
    assert k80["sigma"] < first["jobs"]["n"]["throughput"]["k80"]["sigma"]


def test_bad_input_is_one_line_and_exit_code_2(tmp_path: Path) -> None:
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"jobs": [{"id": "n", "job_type": "ResNet-19"}]}))
    ran = run("estimate", str(request))
    assert ran.returncode == 2
    assert ran.stderr.count("\n") == 1 and "jobs[0].job_type: unknown job type" in ran.stderr
    assert "Traceback" not in ran.stderr
    missing = run("estimate", str(tmp_path / "absent.json"))
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1
