"""The human view of a result: status line, per-type usage, then the jobs (first rows only)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from solver.policy import Policy
    from solver.result import JobResult, SolveResult

TABLE_ROWS = 40
METRIC_COLUMNS = 3


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
    console.print(_job_table(shown, [g.name for g in result.gpu_types]))
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


def _job_table(shown: list[JobResult], names: list[str]) -> Table:
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
    table = Table(*header, *metrics, "note")
    for job in shown:
        row = [job.id]
        if shares:
            share = "—" if job.normalized_share is None else f"{job.normalized_share:.4f}"
            row += [f"{job.allocation.get(n, 0.0):.3f}" for n in names]
            row += [f"{job.effective_throughput:.4g}", share]
        if placed:
            row.append(" ".join(f"{node}:{gpus}" for node, gpus in (job.placement or {}).items()))
        table.add_row(*row, *(_metric(job.metrics.get(key)) for key in metrics), job.reason or "")
    return table


def _metric(value: object) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)
