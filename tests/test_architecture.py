"""The architecture holds: the import contract, module and function sizes, lazy imports, and
fixtures that are all snapshots."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("apportion",)
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
# What a max-min request must never pay for: the MILP families, scipy's optimizers, the
# modelling layers of the optional backends, and explanations (off unless asked for).
HEAVY = (
    "scipy.optimize",
    "cvxpy",
    "pulp",
    "apportion.formulations.placement",
    "apportion.formulations.deadlines",
    "apportion.solver.explain",
)


def _modules() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


def test_import_contract_is_kept() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(lint)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_modules_and_functions_stay_small() -> None:
    too_long = []
    for path in _modules():
        source = path.read_text()
        name = path.relative_to(ROOT)
        if source.count("\n") > MAX_MODULE_LINES:
            too_long.append(f"{name}: {source.count(chr(10))} lines")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    too_long.append(f"{name}:{node.lineno} {node.name}: {lines} lines")
    assert not too_long, "\n".join(too_long)


def _imported_by_cli(*args: str) -> set[str]:
    """The modules loaded by one run of the CLI, read from the process itself at exit."""
    probe = (
        "import atexit, json, sys\n"
        "def report():\n"
        "    sys.stderr.write('\\nMODULES ' + json.dumps(sorted(sys.modules)))\n"
        "atexit.register(report)\n"
        f"sys.argv = ['solve', *{list(args)!r}]\n"
        "from apportion.cli import run\n"
        "run()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    listed = done.stderr.rsplit("MODULES ", 1)[1]
    return set(json.loads(listed))


@pytest.mark.parametrize(
    "args",
    [("--help",), (str(FIXTURES / "gavel_physical_96.json"), "--format", "json")],
    ids=["help", "max-min solve"],
)
def test_a_max_min_run_imports_nothing_heavy(args: tuple[str, ...]) -> None:
    loaded = _imported_by_cli(*args)
    heavy = sorted(m for m in loaded if m.startswith(HEAVY))
    assert not heavy, heavy
    # scipy.sparse comes in through solver.sparse, without numpy's build and test tools.
    assert not loaded & {"numpy.f2py", "numpy.testing"}
    if args == ("--help",):
        assert "numpy" not in loaded and "apportion.formulations" not in loaded


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.json")), ids=lambda p: p.name)
def test_every_fixture_is_a_snapshot_that_solves(path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "apportion", str(path), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] in ("optimal", "feasible")
