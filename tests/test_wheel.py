"""The package as a user installs it: a wheel built from the project's files carries every data
file the code reads beside itself (the reference systems' traces and profiles), and installed
into a fresh environment, not editable, `solve simulate gavel` runs from outside the source
tree."""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import orjson
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "apportion"


def _data_files() -> set[str]:
    """Every file of the package that is not Python source, as a path in the wheel."""
    return {
        path.relative_to(ROOT).as_posix()
        for path in PACKAGE.rglob("*")
        if path.is_file() and path.suffix not in (".py", ".pyc") and "__pycache__" not in path.parts
    }


def _run(command: list[str], cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    return done.stdout


def _wheel(tmp_path: Path) -> Path:
    """The wheel, built offline from a copy of the project's files (nothing written into the
    source tree)."""
    source = tmp_path / "source"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    shutil.copytree(PACKAGE, source / "apportion", ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    out = tmp_path / "dist"
    pip = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index"]
    _run([*pip, "--wheel-dir", str(out), str(source)], tmp_path, dict(os.environ))
    (wheel,) = out.glob("apportion-*.whl")
    return wheel


def _environment(tmp_path: Path, wheel: Path) -> Path:
    """A fresh virtual environment with the wheel installed (not editable); its dependencies
    are this environment's, seen through a path file (they are not installed again)."""
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp_path, dict(os.environ))
    python = venv / "bin" / "python"
    own = _run([str(python), "-c", "import site; print(site.getsitepackages()[0])"], tmp_path, {})
    # Plain path entries: the path files in them (this environment's editable install of the
    # project among them) are not read, so `apportion` can only come from the wheel.
    Path(own.strip(), "dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    install = [sys.executable, "-m", "pip", "--python", str(python), "install"]
    _run([*install, "--no-deps", "--no-index", str(wheel)], tmp_path, dict(os.environ))
    return venv


@pytest.mark.slow
def test_the_wheel_carries_the_reference_data_and_simulates_when_installed(
    tmp_path: Path,
) -> None:
    wheel = _wheel(tmp_path)
    with zipfile.ZipFile(wheel) as archive:
        carried = set(archive.namelist())
    wanted = _data_files()
    # The trace `solve simulate gavel` replays by default, among some hundred data files.
    assert "apportion/refdata/source/gavel_max_min_fairness.trace" in wanted
    assert sorted(wanted - carried) == []

    venv = _environment(tmp_path, wheel)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    where = _run(
        [str(venv / "bin" / "python"), "-c", "import apportion.refdata as r; print(r.SOURCE)"],
        outside,
        clean,
    )
    assert Path(where.strip()).is_relative_to(venv)
    command = [str(venv / "bin" / "solve"), "simulate", "gavel", "--policy", "max_min_fairness"]
    command += ["--jobs", "20", "--no-progress", "--format", "json"]
    (row,) = orjson.loads(_run(command, outside, clean))
    assert row["trace"] == "gavel" and row["jobs"] == 20
    assert row["finished"] + row["unfinished"] + row["never_started"] == 20
