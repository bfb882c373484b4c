"""`python -m bench.notebooks` says which cell it is in, as each starts, in a real kernel."""

from __future__ import annotations

import io

import nbformat

from bench.notebooks import CellProgress, execute


def test_each_code_cell_is_announced_as_it_starts() -> None:
    notebook = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# title"),
            nbformat.v4.new_code_cell("import time\ntime.sleep(0.2)"),
            nbformat.v4.new_code_cell("\n# the first line that says something\nprint(1 + 1)"),
        ]
    )
    said = io.StringIO()
    execute(notebook, full=False, progress=CellProgress("probe.ipynb", notebook, said))
    lines = said.getvalue().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("probe.ipynb [1/2] ") and lines[0].endswith(": import time")
    assert lines[1].startswith("probe.ipynb [2/2] ")
    assert lines[1].endswith(": # the first line that says something")
    seconds = [float(line.split("] ")[1].split(" s:")[0]) for line in lines]
    # The first cell's 0.2 s sleep came between them (each time is printed to a tenth).
    assert seconds[1] - seconds[0] > 0.1 - 1e-9
    assert notebook.cells[2].outputs[0]["text"] == "2\n"
