"""A sweep on a terminal (a real pseudo-terminal) shows its runs as they start, before the first
one ends, and still ends with the summary table."""

from __future__ import annotations

import re

from tests.terminal import on_terminal


def test_a_sweep_names_the_runs_under_way() -> None:
    screen = on_terminal(
        ["simulate", "gavel", "--jobs", "6", "--policy", "srtf,las", "--workers", "2"],
        columns=160,
    )
    assert screen.exit_code == 0, screen.text
    bars = [line for line in screen.lines if line.startswith("sweep")]
    started = [line for line in bars if " 0/2 " in line and "started: srtf gavel" in line]
    assert started, bars  # while nothing has finished, the bar names what runs
    assert any(" 2/2 " in line for line in bars)
    assert "simulation summary" in screen.text


def test_the_summary_table_has_one_number_format() -> None:
    screen = on_terminal(["simulate", "gavel", "--jobs", "6", "--policy", "srtf"], columns=200)
    assert screen.exit_code == 0, screen.text
    header = next(i for i, line in enumerate(screen.lines) if "JCT h" in line)
    row = next(line for line in screen.lines[header + 1 :] if line.strip().startswith("srtf"))
    cells = row.split()[2:]  # after the policy and the trace
    assert cells, row
    for cell in cells:
        assert re.fullmatch(r"\d+|\d+\.\d\d|\d+\.\d%|–", cell), (cell, row)
