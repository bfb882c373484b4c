"""Progress bars for long simulations and sweeps, and the summary table printed at the end."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from rich import box
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from apportion.simulator.engine import Progress as OnStep
from apportion.simulator.result import SimulationResult
from apportion.simulator.sweep import RunSpec

#: Columns of the summary table: (summary key, header, format).
COLUMNS = (
    ("finished", "done", "{:.0f}"),
    ("jct_mean", "JCT h", "{:.2f}"),
    ("jct_p95", "p95 h", "{:.2f}"),
    ("jct_p99", "p99 h", "{:.2f}"),
    ("makespan", "span h", "{:.1f}"),
    ("queueing_delay_mean", "queue h", "{:.2f}"),
    ("ftf_rho_max", "max ρ", "{:.2f}"),
    ("utilization", "util", "{:.0%}"),
    ("deadline_met_fraction", "SLOs", "{:.0%}"),
    ("policy_calls", "calls", "{:.0f}"),
    ("policy_seconds", "policy s", "{:.1f}"),
    ("wall_seconds", "wall s", "{:.1f}"),
)
HOURS = frozenset({"jct_mean", "jct_p95", "jct_p99", "makespan", "queueing_delay_mean"})


def _bar(console: Console | None) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[note]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=False,
    )


@contextmanager
def simulation_progress(label: str, jobs: int, console: Console | None = None) -> Iterator[OnStep]:
    """A bar over finished jobs, with the simulated time; yields the engine's callback."""
    with _bar(console) as bar:
        task = bar.add_task(label, total=jobs, note="")

        def update(finished: int, now: float) -> None:
            bar.update(task, completed=finished, note=f"t = {now / 3600:.1f} h")

        yield update


@contextmanager
def sweep_progress(runs: int, console: Console | None = None) -> Iterator[Any]:
    """A bar over finished runs; yields the sweep's `on_done` callback."""
    with _bar(console) as bar:
        task = bar.add_task("sweep", total=runs, note="")

        def done(run: RunSpec, result: SimulationResult) -> None:
            labels = run.labels()
            bar.update(task, advance=1, note=f"{labels['policy']} {labels['trace']}")

        yield done


def _cell(key: str, value: Any, pattern: str) -> str:
    if value is None or value != value:  # None or NaN
        return "–"
    return pattern.format(value / 3600 if key in HOURS else value)


#: Columns left out, in this order, when a terminal is too narrow for all of them.
OPTIONAL = ("jct_p99", "queueing_delay_mean", "ftf_rho_max", "policy_calls", "jct_p95")


def summary_table(
    rows: Sequence[Mapping[str, Any]],
    labels: Sequence[str] = ("policy", "trace"),
    width: int | None = None,
) -> Table:
    """One row per run: its labels and the headline metrics (times in hours), as many of the
    metrics as fit in `width` columns (all when None)."""
    present = [c for c in COLUMNS if any(row.get(c[0]) is not None for row in rows)]
    cells = [[_cell(key, row.get(key), pattern) for key, _, pattern in present] for row in rows]
    names = [[str(row.get(name, "")) for name in labels] for row in rows]

    def needed(columns: list[int]) -> int:
        label_width = sum(
            max([len(n), *(len(r[i]) for r in names)]) + 2 for i, n in enumerate(labels)
        )
        return label_width + sum(
            max([len(present[c][1]), *(len(r[c]) for r in cells)]) + 2 for c in columns
        )

    keep = list(range(len(present)))
    for key in OPTIONAL:
        if width is None or needed(keep) + 4 <= width:  # + the table's edges
            break
        keep = [c for c in keep if present[c][0] != key]
    # No vertical rules; numbers never wrap, labels fold if they must.
    table = Table(box=box.SIMPLE_HEAD, title="simulation summary (times in hours)")
    for name in labels:
        table.add_column(name, overflow="fold")
    for c in keep:
        table.add_column(present[c][1], justify="right", no_wrap=True)
    for label_cells, metric_cells in zip(names, cells, strict=True):
        table.add_row(*label_cells, *(metric_cells[c] for c in keep))
    return table
