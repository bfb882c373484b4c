"""`solve --explain` on a terminal: the per-type prices and binding rows first, then the jobs
grouped by reason, each distinct reason printed once in full with the jobs it holds.

A job's `why` is the reason it shares with others (its code, the rows that hold it) and, where
a binding type would be worth more to it, that job's own gain ("would gain 0.097 per unit of
v100 time, none is free"). The gain is split off into the job table's last column, so jobs held
by the same rows fall into one group; the JSON document keeps every `why` whole.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rich.markup import escape
from rich.table import Table

from apportion.cli.numbers import number
from apportion.solver.explain.words import gain_clause

if TYPE_CHECKING:
    from rich.console import Console

    from apportion.solver.result import Explanation, JobExplanation

#: Job ids listed under a reason; the job table's `reason` column names the rest.
LISTED_JOBS = 12


@dataclass
class Reason:
    """One distinct reason and the jobs it holds."""

    label: str  # R1, R2, ...
    code: str
    text: str
    rows: list[str]
    jobs: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Grouped:
    reasons: list[Reason]
    label: dict[str, str]  # job id → its reason's label
    gain: dict[str, str]  # job id → the type most worth to it and its gain ("v100 0.0975")


def group(explanation: Explanation) -> Grouped:
    """The jobs by reason, largest group first."""
    binding = {g.name for g in explanation.gpu_types if g.binding}
    by_key: dict[tuple[str, str], Reason] = {}
    gains: dict[str, str] = {}
    for job in explanation.jobs:
        shared, gain = _split(job, binding)
        key = (job.code, shared)
        if key not in by_key:
            by_key[key] = Reason("", job.code, shared, _generic_rows(job))
        by_key[key].jobs.append(job.id)
        gains[job.id] = gain
    reasons = sorted(by_key.values(), key=lambda r: -len(r.jobs))
    labels = {}
    for number_, reason in enumerate(reasons, start=1):
        reason.label = f"R{number_}"
        labels.update(dict.fromkeys(reason.jobs, reason.label))
    return Grouped(reasons, labels, gains)


def _split(job: JobExplanation, binding: set[str]) -> tuple[str, str]:
    """(the reason without the job's own gain, the gain) — the `why` whole when it does not end
    with the gain clause the explanation would have written for this job."""
    wanted = {k: v for k, v in job.gain_if_free.items() if k in binding and v > 0}
    if not wanted:
        return job.why, ""
    top = max(wanted, key=lambda k: wanted[k])  # the first of equals, as the explanation picks
    clause = gain_clause(top, wanted[top])
    if not job.why.endswith("; " + clause):
        return job.why, ""
    return job.why.removesuffix("; " + clause), f"{top} {number(wanted[top])}"


def _generic_rows(job: JobExplanation) -> list[str]:
    """The rows behind the reason with the job's own name replaced (`share[<job>]`)."""
    return [row.replace(f"[{job.id}]", "[<job>]") for row in job.rows]


def print_prices(explanation: Explanation, console: Console) -> None:
    """Per GPU type: binding or idle, the shadow price, and the capacity dual of every other
    stage (price columns only where the evidence has prices)."""
    stages = [s.name for s in explanation.stages if s.name != explanation.price_stage]
    priced = any(g.shadow_price is not None for g in explanation.gpu_types)
    table = Table("row", "state", title="prices (capacity rows)", title_justify="left")
    if priced:
        table.add_column(f"shadow price ({explanation.price_stage})", justify="right")
        for stage in stages:
            table.add_column(f"dual in {stage}", justify="right")
    for g in explanation.gpu_types:
        state = "binding" if g.binding else f"{number(g.idle)} GPUs idle"
        prices = [number(g.shadow_price), *(number(g.prices.get(s)) for s in stages)]
        table.add_row(escape(f"capacity[{g.name}]"), state, *(prices if priced else []))
    console.print(table)
    if explanation.note:
        console.print(f"[dim]{escape(explanation.note)}[/dim]", highlight=False)


def print_reasons(grouped: Grouped, console: Console) -> None:
    """Each distinct reason once, in full, with its rows and the jobs it holds."""
    jobs = sum(len(r.jobs) for r in grouped.reasons)
    count = len(grouped.reasons)
    console.print(
        f"[bold]why[/bold]: {jobs} jobs, {count} distinct reason{'s' if count != 1 else ''}",
        highlight=False,
    )
    for reason in grouped.reasons:
        size = f"{len(reason.jobs)} job{'s' if len(reason.jobs) != 1 else ''}"
        # The code leads the text where the explanation wrote it so ("bottleneck: ...").
        text = reason.text
        if not text.startswith(reason.code):
            text = f"{reason.code}: {text}"
        console.print(f"[bold]{reason.label}[/bold] ({size}) {escape(text)}", highlight=False)
        if reason.rows:
            console.print(f"    rows: {escape(', '.join(reason.rows))}", highlight=False)
        shown = ", ".join(reason.jobs[:LISTED_JOBS])
        more = len(reason.jobs) - LISTED_JOBS
        listed = f"    jobs: {escape(shown)}" + (f" and {more} more" if more > 0 else "")
        console.print(listed, highlight=False)
