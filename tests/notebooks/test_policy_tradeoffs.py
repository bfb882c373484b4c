"""notebooks/policy_tradeoffs.ipynb in a real kernel: it runs top to bottom against the current
code (a failing assert in a cell fails the test) and prints its tables."""

from __future__ import annotations

from tests.notebooks.kernel import code_cells, execute, text


def test_the_notebook_runs_and_prints_its_tables() -> None:
    notebook = execute("policy_tradeoffs.ipynb")
    printed = "".join(text(cell) for cell in code_cells(notebook))
    assert printed.strip(), "the notebook printed nothing"
    for expected in ("max_min_fairness", "aware", "water-filling levels", "utilization"):
        assert expected in printed
