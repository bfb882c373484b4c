"""The human view of a result: status line, per-type usage, then the jobs (first rows only)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from apportion.solver.policy import Policy
    from apportion.solver.result import Comparison, JobResult, SolveResult

TABLE_ROWS = 40
METRIC_COLUMNS = 3
WHY_WIDTH = 72


def render(result: SolveResult, console: Console) -> None:
    objective = "—" if result.objective is None else f"{result.objective:.6g}"
    console.print(
        f"[bold]{result.policy}[/bold]  status [bold]{result.status}[/bold]  "
        f"{result.objective_name or 'objective'} = {objective}  "
        f"({result.solver.backend}/{result.solver.solver}, {result.solver.total_seconds:.3f} s)"
    )
    usage = Table("GPU type", "used", "available", "utilization")
    for g in result.gpu_types:
        usage.add_row(g.name, f"{g.used:.3f}", str(g.available), f"{g.utilization:.1%}")
    console.print(usage)
    shown = result.jobs[:TABLE_ROWS]
    why = None
    if result.explanation is not None:
        why = {job.id: job.why for job in result.explanation.jobs}
        _explanation_lines(result, console)
    console.print(_job_table(shown, [g.name for g in result.gpu_types], why))
    if len(result.jobs) > TABLE_ROWS:
        console.print(f"… {len(result.jobs) - TABLE_ROWS} more jobs (use --format json)")
    scalars = [
        f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}"
        for k, v in result.summary.items()
        if isinstance(v, int | float | str | bool)
    ]
    if scalars:
        console.print(", ".join(scalars))
    for warning in result.warnings:
        console.print(f"[yellow]warning:[/yellow] {warning}")


def render_policies(policies: list[Policy], console: Console) -> None:
    table = Table("policy", "problem", "what it optimizes", "options")
    for p in policies:
        table.add_row(p.name, p.problem_class, p.summary, ", ".join(p.options.model_fields))
    console.print(table)


def _explanation_lines(result: SolveResult, console: Console) -> None:
    """One line per GPU type (binding, idle, shadow price) and the explanation's note."""
    explanation = result.explanation
    assert explanation is not None
    for g in explanation.gpu_types:
        price = "—" if g.shadow_price is None else f"{g.shadow_price:.4g}"
        state = "binding" if g.binding else f"{g.idle:.3g} idle"
        console.print(f"{g.name}: {state}, shadow price {price}")
    if explanation.note:
        console.print(f"[dim]{explanation.note}[/dim]")


def render_comparison(answer: Comparison, console: Console) -> None:
    """The objectives, GPU types, then the jobs that changed, largest first."""

    def number(value: float | None) -> str:
        return "—" if value is None else f"{value:.6g}"

    console.print(
        f"[bold]{answer.policy}[/bold]  {answer.objective_name}: "
        f"{number(answer.objective_before)} → {number(answer.objective_after)} "
        f"(Δ {number(answer.objective_delta)})  status {answer.status_before} → "
        f"{answer.status_after}"
    )
    usage = Table("GPU type", "available", "used")
    for g in answer.gpu_types:
        usage.add_row(
            g.name,
            f"{g.available_before} → {g.available_after}",
            f"{g.used_before:.3f} → {g.used_after:.3f}",
        )
    console.print(usage)
    jobs = Table("job", "change", "allocation Δ", "share", "throughput Δ")
    for c in answer.jobs[:TABLE_ROWS]:
        delta = " ".join(f"{k}:{v:+.3f}" for k, v in c.allocation_delta.items())
        share = f"{number(c.share_before)} → {number(c.share_after)}"
        jobs.add_row(c.id, c.change, delta, share, f"{c.throughput_delta:+.4g}")
    console.print(jobs)
    if len(answer.jobs) > TABLE_ROWS:
        console.print(f"… {len(answer.jobs) - TABLE_ROWS} more changes (use --format json)")
    console.print(f"{answer.unchanged} jobs unchanged. [dim]{answer.advisory}[/dim]")


def _job_table(shown: list[JobResult], names: list[str], why: dict[str, str] | None) -> Table:
    """Time-share columns for allocation policies, a placement column for placement policies,
    then the policy's own metrics (finish time, ρ, SLO met, ...) in the policy's order."""
    placed = any(job.placement for job in shown)
    shares = not placed
    metrics = list(dict.fromkeys(key for job in shown for key in job.metrics))[:METRIC_COLUMNS]
    header = ["job"]
    if shares:
        header += [*names, "throughput", "norm. share"]
    if placed:
        header.append("placement")
    table = Table(*header, *metrics, "note", *(["why"] if why is not None else []))
    for job in shown:
        row = [job.id]
        if shares:
            share = "—" if job.normalized_share is None else f"{job.normalized_share:.4f}"
            row += [f"{job.allocation.get(n, 0.0):.3f}" for n in names]
            row += [f"{job.effective_throughput:.4g}", share]
        if placed:
            row.append(" ".join(f"{node}:{gpus}" for node, gpus in (job.placement or {}).items()))
        extra = [_short(why.get(job.id, ""))] if why is not None else []
        values = (_metric(job.metrics.get(key)) for key in metrics)
        table.add_row(*row, *values, job.reason or "", *extra)
    return table


def _short(text: str) -> str:
    return text if len(text) <= WHY_WIDTH else text[: WHY_WIDTH - 1] + "…"


def _metric(value: object) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)
