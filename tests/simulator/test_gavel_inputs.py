"""`solve simulate` in Gavel's vocabulary: its policy names (read as ours, said on stderr), its
`V100:P100:K80` cluster spec and its throughputs file, each checked against the same run
described in our own terms."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli_runner import Ran, invoke
from tests.simulator.helpers import gavel_throughputs_file

RUN = ["--jobs", "30", "--format", "json", "--no-progress"]


def simulate(*args: str) -> tuple[Ran, dict[str, Any]]:
    ran = invoke(["simulate", *args, *RUN])
    assert ran.exit_code == 0, ran.stderr
    (row,) = json.loads(ran.stdout)
    return ran, row


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    keys = ("jct_mean", "jct_p95", "makespan", "finished", "utilization")
    return all(a[k] == pytest.approx(b[k]) for k in keys)


def test_gavel_policy_names_run_as_ours_and_say_so() -> None:
    ran, perf = simulate("gavel", "--policy", "max_min_fairness_perf")
    _, ours = simulate("gavel", "--policy", "max_min_fairness")
    assert _same(perf, ours)
    assert "note: 'max_min_fairness_perf' is Gavel's name: solved as max_min_fairness" in ran.stderr
    ran, packed = simulate("gavel", "--policy", "max_min_fairness_packed")
    _, sharing = simulate("gavel", "--policy", "max_min_fairness", "-o", "space_sharing=true")
    assert _same(packed, sharing) and not _same(packed, ours)  # the implied option is applied
    assert "with space_sharing=true" in ran.stderr


def test_gavels_cluster_spec_is_v100_p100_k80() -> None:
    _, spec = simulate("gavel", "--cluster", "8:16:24")
    _, named = simulate("gavel", "--cluster", "v100=8,p100=16,k80=24")
    _, default = simulate("gavel")
    assert _same(spec, named) and _same(spec, default)
    _, two = simulate("poisson", "2", "--cluster", "36:0:36", "--policy", "srtf")
    assert "utilization_p100" not in two and {"utilization_v100", "utilization_k80"} <= set(two)


def test_a_gavel_throughputs_file_replaces_the_table(tmp_path: Path) -> None:
    _, bundled = simulate("gavel")
    same = gavel_throughputs_file(tmp_path / "simulation_throughputs.json")
    _, read = simulate("gavel", "--throughputs", str(same))
    assert _same(read, bundled)
    faster = gavel_throughputs_file(tmp_path / "twice.json", scale=2.0)
    _, doubled = simulate("gavel", "--throughputs", str(faster))
    # Every job's steps are the trace's; twice the speed everywhere halves the time they take.
    assert doubled["jct_mean"] < 0.75 * bundled["jct_mean"]


def test_a_bad_throughputs_file_names_the_file_and_key(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"v100": {"('ResNet-50', 1)": {"null": "fast"}}}))
    ran = invoke(["simulate", "gavel", "--throughputs", str(bad), *RUN])
    assert ran.exit_code == 2 and ran.stderr.count("\n") == 1
    assert str(bad) in ran.stderr and "('ResNet-50', 1)" in ran.stderr
    ran = invoke(["simulate", "tiresias", "--throughputs", str(bad), *RUN])
    assert ran.exit_code == 2 and "applies to gavel, poisson" in ran.stderr
