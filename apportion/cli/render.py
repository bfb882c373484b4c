"""The human view of a result: status line, per-type usage, then the jobs (first rows only), and
the policy's summary in words. Every number is printed with one format (`cli.numbers`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Column, Table

from apportion.cli.numbers import number

if TYPE_CHECKING:
    from apportion.cli.explain_view import Grouped
    from apportion.solver.policy import AnyPolicy
    from apportion.solver.result import Comparison, JobResult, SolveResult

TABLE_ROWS = 100
METRIC_COLUMNS = 3
#: The job column is never narrower than its ids, up to this many characters.
ID_WIDTH = 32

#: The Pareto stage of the share policies (`summary.pareto`), in words.
PARETO_WORDS = {
    "every job at the level": "not needed: every job is held at the max-min level, so no job "
    "can get more without another getting less",
    "ceiling": "not needed: every job reaches its own ceiling, one LP answered",
    "second LP": "solved: a second LP gave what the level leaves to jobs that can use it",
    "final LP": "solved: a last LP over the frozen levels gave what is left to jobs that can use "
    "it",
    "off": "off (-o pareto=false): jobs above the level may leave GPUs idle",
    "not applied": "not applied: its LP did not end optimal (see the warning)",
}


class Screen(Console):
    """Rich's console on stdout, leaving a closed pipe (`solve ... | head`) to the command
    line's one answer for it instead of rich's own exit."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError


def render(result: SolveResult, console: Console) -> None:
    objective = number(result.objective)
    # Why the solver stopped, where it says more than the status does.
    stopped = "" if result.termination.value == result.status.value else f" ({result.termination})"
    console.print(
        f"[bold]{result.policy}[/bold]  status [bold]{result.status}[/bold]{stopped}  "
        f"{result.objective_name or 'objective'} = {objective}  "
        f"({result.solver.backend}/{result.solver.solver}, {result.solver.total_seconds:.3f} s)",
        highlight=False,
    )
    if result.policy_note:
        console.print(f"note: {escape(result.policy_note)}", highlight=False)
    usage = Table("GPU type", "used", "available", "utilization")
    for column in usage.columns[1:]:
        column.justify = "right"
    for g in result.gpu_types:
        usage.add_row(g.name, number(g.used), str(g.available), f"{g.utilization:.1%}")
    console.print(usage)
    grouped = None
    if result.explanation is not None:
        from apportion.cli.explain_view import group, print_prices, print_reasons

        print_prices(result.explanation, console)
        grouped = group(result.explanation)
        print_reasons(grouped, console)
    console.print(_job_table(result.jobs[:TABLE_ROWS], [g.name for g in result.gpu_types], grouped))
    if len(result.jobs) > TABLE_ROWS:
        console.print(f"… {len(result.jobs) - TABLE_ROWS} more jobs (use --format json)")
    _summary(result, console)
    for warning in result.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(warning)}", highlight=False)


def _summary(result: SolveResult, console: Console) -> None:
    """The policy's summary, one `name: value` per line, the Pareto stage in words."""
    lines = []
    for key, value in result.summary.items():
        if not isinstance(value, int | float | str | bool) or value is None:
            continue
        if key == "pareto":
            lines.append(f"Pareto stage: {PARETO_WORDS.get(str(value), value)}")
        else:
            shown = number(value) if isinstance(value, float) else str(value)
            lines.append(f"{key.replace('_', ' ')}: {shown}")
    for line in lines:
        console.print(escape(line), highlight=False)


def render_policies(policies: list[AnyPolicy], console: Console) -> None:
    """One block per policy (its name, aliases, what it optimizes, every option on a line of its
    own with its default): nothing is cut, whatever the terminal's width."""
    from apportion.solver.registry import aliases, gavel_names

    for p in policies:
        console.print(f"[bold]{p.name}[/bold] ({p.problem_class})", highlight=False)
        console.print(f"  {p.summary}", highlight=False)
        also = [*aliases(p.name), *(f"{n} (Gavel)" for n in gavel_names(p.name))]
        if also:
            console.print(f"  also: {', '.join(also)}", highlight=False, overflow="fold")
        for name, option in p.options.model_fields.items():
            default = option.get_default(call_default_factory=True)
            console.print(f"  -o {name}={_json(default)}", highlight=False, overflow="fold")
        console.print()
    console.print(
        "Every policy also takes the common options: --backend, --solver, --time-limit, "
        "--mip-gap, --explain (and -o threads=N, -o verbose=true).",
        highlight=False,
    )


def _json(value: object) -> str:
    import json

    try:
        return json.dumps(value)
    except TypeError:
        return str(value)


def render_comparison(answer: Comparison, console: Console) -> None:
    """The objectives, GPU types, then the jobs that changed, largest first."""

    console.print(
        f"[bold]{answer.policy}[/bold]  {answer.objective_name}: "
        f"{number(answer.objective_before)} → {number(answer.objective_after)} "
        f"(Δ {number(answer.objective_delta)})  status {answer.status_before} → "
        f"{answer.status_after}"
    )
    for warning in answer.warnings:
        console.print(f"[yellow]warning:[/yellow] {warning}")
    usage = Table("GPU type", "available", "used")
    for g in answer.gpu_types:
        usage.add_row(
            g.name,
            f"{g.available_before} → {g.available_after}",
            f"{number(g.used_before)} → {number(g.used_after)}",
        )
    console.print(usage)
    jobs = Table("job", "change", "allocation Δ", "share", "throughput Δ")
    for c in answer.jobs[:TABLE_ROWS]:
        delta = " ".join(f"{k}:{v:+.4f}" for k, v in c.allocation_delta.items())
        share = f"{number(c.share_before)} → {number(c.share_after)}"
        jobs.add_row(c.id, c.change, delta, share, f"{c.throughput_delta:+.4f}")
    console.print(jobs)
    if len(answer.jobs) > TABLE_ROWS:
        console.print(f"… {len(answer.jobs) - TABLE_ROWS} more changes (use --format json)")
    console.print(f"{answer.unchanged} jobs unchanged. [dim]{answer.advisory}[/dim]")


def _job_table(shown: Sequence[JobResult], names: list[str], grouped: Grouped | None) -> Table:
    """Time-share columns for allocation policies, a placement column for placement policies,
    then the policy's own metrics (finish time, ρ, SLO met, ...) in the policy's order; with an
    explanation, each job's reason (R1, R2, ... as listed above) and its own gain."""
    metrics = list(dict.fromkeys(key for job in shown for key in job.metrics))[:METRIC_COLUMNS]
    # A narrow terminal squeezes the other columns first: without its id a row means nothing.
    width = min(max((len(job.id) for job in shown), default=3), ID_WIDTH)
    columns: list[tuple[Column, Callable[[JobResult], str]]] = [
        (Column("job", no_wrap=True, min_width=width), lambda job: job.id)
    ]
    if any(job.placement for job in shown):
        columns.append((Column("placement"), _placement))
    else:
        columns += [(_right(n), _time_on(n)) for n in names]
        columns.append((_right("throughput"), lambda job: number(job.effective_throughput)))
        columns.append((_right("norm. share"), lambda job: number(job.normalized_share)))
    columns += [(_right(k), _metric_of(k)) for k in metrics]
    if any(job.reason for job in shown):
        columns.append((Column("note"), lambda job: job.reason or ""))
    if grouped is not None:
        label, gain = grouped.label, grouped.gain
        columns.append((Column("reason", no_wrap=True), lambda job: label.get(job.id, "")))
        if any(gain.get(job.id) for job in shown):
            # The gain per unit of time on the fully used type worth most to the job, if free.
            columns.append((_right("gain if free"), lambda job: gain.get(job.id, "")))
    table = Table(*(column for column, _ in columns))
    for job in shown:
        table.add_row(*(escape(cell(job)) for _, cell in columns))
    return table


def _right(header: str) -> Column:
    return Column(header, justify="right", no_wrap=True)


def _time_on(name: str) -> Callable[[JobResult], str]:
    return lambda job: number(job.allocation.get(name, 0.0))


def _metric_of(key: str) -> Callable[[JobResult], str]:
    return lambda job: _metric(job.metrics.get(key))


def _placement(job: JobResult) -> str:
    return " ".join(f"{node}:{gpus}" for node, gpus in (job.placement or {}).items())


def _metric(value: object) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return number(value)
    return str(value)
