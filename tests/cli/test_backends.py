"""`solve --backend/--solver/--export` on the command line: exit codes and messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_runner import invoke
from tests.conformance.cases_max_min import TWO_BY_TWO


@pytest.fixture
def snapshot_file(tmp_path: Path) -> Path:
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(TWO_BY_TWO))
    return path


@pytest.mark.parametrize(("backend", "solver"), [("cvxpy", "SCS"), ("pulp", "CBC")])
def test_backend_and_solver_flags(snapshot_file: Path, backend: str, solver: str) -> None:
    out = invoke([str(snapshot_file), "--backend", backend, "--solver", solver])
    assert out.exit_code == 0, out.output
    result = json.loads(out.stdout)
    assert result["solver"]["backend"] == backend and result["solver"]["solver"] == solver
    assert result["objective"] == pytest.approx(1.0, rel=1e-6)


def test_unknown_solver_exits_2_naming_the_available_ones(snapshot_file: Path) -> None:
    out = invoke([str(snapshot_file), "--backend", "pulp", "--solver", "xyz"])
    assert out.exit_code == 2
    assert "options.solver" in out.stderr and "CBC, HiGHS" in out.stderr


@pytest.mark.parametrize("suffix", ["lp", "mps"])
def test_export_writes_the_model_and_does_not_solve(
    snapshot_file: Path, tmp_path: Path, suffix: str
) -> None:
    target = tmp_path / f"m.{suffix}"
    out = invoke([str(snapshot_file), "--export", str(target)])
    assert out.exit_code == 0, out.output
    assert out.stdout.startswith(f"wrote {target}: model max_min_fairness, 5 variables")
    assert "x(a,k80)" in target.read_text()


def test_export_with_a_bad_suffix_exits_2(snapshot_file: Path, tmp_path: Path) -> None:
    out = invoke([str(snapshot_file), "--export", str(tmp_path / "m.json")])
    assert out.exit_code == 2
    assert "export:" in out.stderr and ".lp or .mps" in out.stderr
