"""The notebooks run top to bottom against the current code (their asserts included)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cells = json.loads(path.read_text())["cells"]
    namespace: dict[str, object] = {}
    cwd = Path.cwd()
    os.chdir(path.parents[1])
    try:
        for cell in cells:
            if cell["cell_type"] == "code":
                exec(compile("".join(cell["source"]), f"{path.name}", "exec"), namespace)
    finally:
        os.chdir(cwd)
    assert capsys.readouterr().out.strip(), "the notebook printed nothing"
