"""A sweep's bar names its runs as they start, before the first one ends (its callbacks driven
in the order a sweep calls them), and a sweep on a real pseudo-terminal still ends with the
summary table."""

from __future__ import annotations

import io
import re

from rich.console import Console

from apportion.simulator.report import sweep_progress
from apportion.simulator.sources import TraceSpec
from apportion.simulator.sweep import SweepSpec, run_one
from tests.terminal import on_terminal


def test_a_sweep_names_the_runs_under_way() -> None:
    runs = SweepSpec(("srtf", "las"), (TraceSpec("gavel", jobs=6),)).runs()
    console = Console(file=io.StringIO(), width=160)
    with sweep_progress(len(runs), console) as bar:
        (task,) = bar.bar.tasks
        assert task.fields["note"] == "starting" and task.completed == 0
        for run in runs:
            bar.started(run)
        # nothing has finished yet, and the bar names what runs
        assert task.fields["note"] == "2 started: srtf gavel, las gavel"
        bar.done(runs[0], run_one(runs[0]))
        assert task.fields["note"] == "1 started: las gavel" and task.completed == 1
        bar.done(runs[1], run_one(runs[1]))
        assert task.fields["note"] == "" and task.completed == 2


def test_a_sweep_on_a_terminal_ends_with_its_summary() -> None:
    screen = on_terminal(
        ["simulate", "gavel", "--jobs", "6", "--policy", "srtf,las", "--workers", "2"],
        columns=160,
    )
    assert screen.exit_code == 0, screen.text
    bars = [line for line in screen.lines if line.startswith("sweep")]
    assert any(" 2/2 " in line for line in bars), bars
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
