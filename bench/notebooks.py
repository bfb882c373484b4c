"""The notebooks, executed top to bottom in a real Jupyter kernel and timed, at their small size
(what the test suite runs) or at full size (`APPORTION_FULL=1`, the paper-sized runs).

    python -m bench.notebooks                 # every notebooks/*.ipynb, small size
    python -m bench.notebooks --full          # full size
    python -m bench.notebooks --full --save   # and write each executed notebook back
                                              # (--save needs --full)
    python -m bench.notebooks --only hetero   # notebooks whose name contains "hetero"

The baseline, timed in the same run, is a one-cell notebook: the kernel's start-up and shutdown,
which every notebook pays; each row gives its time as a multiple of that. `python -m bench.run
--only notebooks` adds the small-size rows to the benchmark table (and the full-size rows with
`APPORTION_FULL=1` set). `--save` refuses to write a notebook whose outputs name a directory of
the machine that ran it (a traceback, a warning's file name). While a notebook runs, each code
cell is announced on stderr as it starts (`heterogeneity.ipynb [4/12] 31.2 s: runs = …`), so a
run of many minutes shows where it is; `--quiet` leaves only the table.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bench.harness import Case, Row

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
TIMEOUT_SECONDS = 7200
#: What running a notebook needs, from the `notebooks` extra (imported when used, so that
#: `bench.run` and `--help` work without it).
NEEDS = ("nbformat", "nbclient", "ipykernel", "matplotlib")


@dataclass
class Timed:
    name: str
    size: str
    seconds: float
    cells: int
    figures: int
    status: str
    notebook: Any


def _figures(notebook: Any) -> int:
    return sum(
        1
        for cell in notebook.cells
        for output in cell.get("outputs", [])
        if {"image/png", "image/svg+xml"} & set(output.get("data", {}))
    )


class CellProgress:
    """`on_cell_start` for nbclient: one stderr line per code cell as it starts, with its
    number, the seconds since the notebook started and the cell's first line."""

    def __init__(self, name: str, notebook: Any, stream: Any = None) -> None:
        self.name = name
        self.total = sum(1 for cell in notebook.cells if cell.cell_type == "code")
        self.seen = 0
        self.started = time.perf_counter()
        self.stream = stream

    def __call__(self, cell: Any, cell_index: int) -> None:
        if cell.cell_type != "code":
            return
        self.seen += 1
        first = next((line for line in cell.source.splitlines() if line.strip()), "")
        elapsed = time.perf_counter() - self.started
        stream = self.stream or sys.stderr
        stream.write(f"{self.name} [{self.seen}/{self.total}] {elapsed:.1f} s: {first[:60]}\n")
        stream.flush()


def execute(notebook: Any, full: bool, progress: CellProgress | None = None) -> float:
    """Run `notebook` in place in a fresh kernel started in the repository root; seconds.
    `progress`, if given, is told as each cell starts."""
    from nbclient import NotebookClient

    client = NotebookClient(
        notebook,
        timeout=TIMEOUT_SECONDS,
        kernel_name="python3",
        resources={"metadata": {"path": str(ROOT)}},
    )
    if progress is not None:
        client.on_cell_start = progress
    before = os.environ.get("APPORTION_FULL")
    os.environ["APPORTION_FULL"] = "1" if full else ""  # the kernel inherits it
    started = time.perf_counter()
    try:
        client.execute()
    finally:
        if before is None:
            os.environ.pop("APPORTION_FULL", None)
        else:
            os.environ["APPORTION_FULL"] = before
    return time.perf_counter() - started


def local_paths(notebook: Any) -> list[str]:
    """Local directories (the checkout, the home directory) named in any output: a traceback
    or a warning would publish them with the saved notebook."""
    places = {str(ROOT), str(Path.home())} - {"/"}
    found = set()
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            text = json.dumps(output)
            found |= {place for place in places if place in text}
    return sorted(found)


def time_notebook(path: Path, full: bool, quiet: bool = True) -> Timed:
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    started = time.perf_counter()
    status = "ok"
    progress = None if quiet else CellProgress(path.name, notebook)
    try:
        seconds = execute(notebook, full, progress)
        if local_paths(notebook):
            status = "an output names a local path"
    except Exception as exc:  # a failing cell: report it in the table, keep timing the rest
        seconds = time.perf_counter() - started
        last = (str(exc).strip().splitlines() or ["(no message)"])[-1]
        status = f"{type(exc).__name__}: {last[:80]}"
    cells = sum(1 for cell in notebook.cells if cell.cell_type == "code")
    size = "full" if full else "small"
    return Timed(path.name, size, seconds, cells, _figures(notebook), status, notebook)


def baseline_seconds() -> float:
    """A one-cell notebook: kernel start-up, one round trip, shutdown."""
    import nbformat

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")])
    return execute(notebook, full=False)


def notebook_paths(only: str = "") -> list[Path]:
    return [path for path in sorted(NOTEBOOKS.glob("*.ipynb")) if only in path.name]


def print_table(rows: list[Timed], baseline: float, console: Console | None = None) -> None:
    table = Table(
        "notebook",
        "size",
        "seconds",
        "× start-up",
        "code cells",
        "figures",
        "status",
        title=f"notebooks (kernel start-up, a one-cell notebook: {baseline:.2f} s)",
    )
    for row in rows:
        table.add_row(
            row.name,
            row.size,
            f"{row.seconds:.1f}",
            f"{row.seconds / baseline:.1f}×",
            str(row.cells),
            str(row.figures),
            row.status,
        )
    (console or Console(width=160)).print(table)


def _row(case: Case, path: Path, full: bool) -> Row:
    baseline = baseline_seconds()
    timed = time_notebook(path, full)
    return Row(
        case=case,
        jobs=0,
        types=0,
        validate=0.0,
        build=0.0,
        solve=0.0,
        total=timed.seconds,
        objective=None,
        status=timed.status,
        backend="jupyter kernel",
        ratio=timed.seconds / baseline,
        note=f"{timed.size} size; {timed.figures} figures; ratio to a one-cell notebook "
        f"({baseline:.2f} s: kernel start-up)",
    )


def _runner(path: Path, full: bool) -> Callable[[Case], Row]:
    return lambda case: _row(case, path, full)


def cases() -> list[Case]:
    """A row per notebook at its small size; with `APPORTION_FULL=1` in the environment, a row
    at its full size too."""
    sizes = (False, True) if os.environ.get("APPORTION_FULL") == "1" else (False,)
    return [
        Case(
            "notebooks",
            f"{path.name}, {'full' if full else 'small'} size (whole kernel run)",
            dict,
            "",
            runner=_runner(path, full),
        )
        for path in notebook_paths()
        for full in sizes
    ]


def save(notebook: Any, path: Path) -> None:
    """Write an executed notebook back, without the per-cell execution timestamps (they would
    change the file on every run)."""
    import nbformat

    for cell in notebook.cells:
        cell.get("metadata", {}).pop("execution", None)
    _, normalized = nbformat.validator.normalize(notebook)  # cell ids and the like
    nbformat.write(nbformat.from_dict(normalized), path)


def missing_extras() -> list[str]:
    """The modules of the `notebooks` extra this environment lacks."""
    return [name for name in NEEDS if importlib.util.find_spec(name) is None]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.notebooks", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--full", action="store_true", help="full size (APPORTION_FULL=1)")
    parser.add_argument(
        "--save",
        action="store_true",
        help="write executed notebooks back (with --full only: the committed outputs are the "
        "full-size ones)",
    )
    parser.add_argument("--only", default="", help="substring of the notebook's file name")
    parser.add_argument("--quiet", action="store_true", help="no per-cell progress on stderr")
    args = parser.parse_args(argv)
    if args.save and not args.full:
        parser.exit(
            2,
            "error: --save needs --full: the committed notebooks hold full-size "
            "outputs, which a small-size run would overwrite\n",
        )
    missing = missing_extras()
    if missing:
        parser.exit(
            2,
            f"error: running the notebooks needs {', '.join(missing)}: install the "
            "notebooks extra (pip install -e '.[notebooks]')\n",
        )
    baseline = baseline_seconds()
    rows = []
    for path in notebook_paths(args.only):
        timed = time_notebook(path, args.full, quiet=args.quiet)
        rows.append(timed)
        if args.save and timed.status == "ok":
            save(timed.notebook, path)
    print_table(rows, baseline)


if __name__ == "__main__":
    main()
