"""Run a notebook top to bottom in a real Jupyter kernel, as a reader would.

The notebooks read their size from the `APPORTION_FULL` environment variable (unset: the small
size the suite runs); the kernel inherits this process's environment.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"


def execute(name: str, timeout: float = 600.0, full: bool = False) -> Any:
    """The executed notebook `notebooks/<name>` (a cell error raises `CellExecutionError`)."""
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=int(timeout),
        kernel_name="python3",
        resources={"metadata": {"path": str(ROOT)}},
    )
    # The kernel is a child process: it inherits the size through the environment.
    before = os.environ.get("APPORTION_FULL")
    os.environ["APPORTION_FULL"] = "1" if full else ""
    try:
        client.execute()
    finally:
        if before is None:
            os.environ.pop("APPORTION_FULL", None)
        else:
            os.environ["APPORTION_FULL"] = before
    return notebook


def code_cells(notebook: Any) -> Iterator[Any]:
    return (cell for cell in notebook.cells if cell.cell_type == "code")


def images(cell: Any) -> int:
    """How many images (PNG or SVG) a cell displayed."""
    return sum(
        1
        for output in cell.get("outputs", [])
        if output.get("output_type") in {"display_data", "execute_result"}
        and ({"image/png", "image/svg+xml"} & set(output.get("data", {})))
    )


def text(cell: Any) -> str:
    """Everything a cell printed or returned as plain text."""
    parts = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            parts.append(output.get("text", ""))
        elif "text/plain" in output.get("data", {}):
            parts.append(output["data"]["text/plain"])
    return "".join(parts)


def quoted(notebook: Any) -> dict[str, Any]:
    """The JSON line the last code cell prints: the numbers a reader would quote."""
    last = list(code_cells(notebook))[-1]
    numbers: dict[str, Any] = json.loads(text(last).strip().splitlines()[-1])
    return numbers
