"""`solve SNAPSHOT.json`: the allocation on a terminal (table) or to a pipe / file (JSON).

Exit codes: 0 an allocation was returned (optimal, or an incumbent within a limit), 1 infeasible
or solver failure, 2 invalid input (one line naming the field and the reason).
"""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from solver.errors import InputError
from solver.pipeline import export_model, solve
from solver.result import JobResult, SolveResult
from solver.snapshot import Snapshot

TABLE_ROWS = 40
METRIC_COLUMNS = 3

app = typer.Typer(add_completion=False, no_args_is_help=False, rich_markup_mode=None)


class OutputFormat(StrEnum):
    TABLE = "table"
    JSON = "json"


@app.command()
def main_command(
    snapshot: Annotated[
        Path | None, typer.Argument(help="Snapshot JSON file ('-' reads standard input).")
    ] = None,
    policy: Annotated[
        str | None, typer.Option(help="Policy, when the snapshot does not name one.")
    ] = None,
    output_format: Annotated[
        OutputFormat | None,
        typer.Option(
            "--format", help="table (default on a terminal) or json (default when piped)."
        ),
    ] = None,
    output: Annotated[Path | None, typer.Option(help="Write the JSON result to this file.")] = None,
    backend: Annotated[
        str | None,
        typer.Option(
            help="auto (default: HiGHS or Clarabel per model), highs, clarabel, cvxpy, pulp."
        ),
    ] = None,
    solver: Annotated[
        str | None,
        typer.Option(
            help="The backend's own solver: cvxpy CLARABEL/HIGHS/SCS/..., pulp CBC/HiGHS."
        ),
    ] = None,
    time_limit: Annotated[float | None, typer.Option(help="Seconds per solve.")] = None,
    mip_gap: Annotated[float | None, typer.Option(help="Relative MILP gap.")] = None,
    contention_csv: Annotated[
        Path | None,
        typer.Option(
            help="DeepShare contention CSV (matrix or long form): becomes the snapshot's "
            "`contention` table."
        ),
    ] = None,
    option: Annotated[
        list[str] | None,
        typer.Option("--option", "-o", help="Policy option KEY=VALUE (value parsed as JSON)."),
    ] = None,
    export: Annotated[
        Path | None,
        typer.Option(
            "--export",
            help="Write the model that would be solved (.lp or .mps, readable names) and exit.",
        ),
    ] = None,
    schema: Annotated[
        bool, typer.Option("--schema", help="Print the snapshot JSON Schema and exit.")
    ] = False,
    list_policies: Annotated[
        bool, typer.Option("--list-policies", help="List policies and exit.")
    ] = False,
) -> None:
    """Solve a cluster snapshot with an exact LP/MILP policy."""
    if schema:
        typer.echo(json.dumps(Snapshot.model_json_schema(), indent=2))
        return
    if list_policies:
        _print_policies()
        return
    if snapshot is None:
        _fail("missing SNAPSHOT: give a snapshot JSON file (or '-' for standard input)")
        return
    options: dict[str, Any] = _parse_options(option or [])
    for key, value in (
        ("backend", backend),
        ("solver", solver),
        ("time_limit", time_limit),
        ("mip_gap", mip_gap),
    ):
        if value is not None:
            options[key] = value
    data = _read_json(snapshot)
    if export is not None:
        _export(data, export, policy, options)
        return
    try:
        if contention_csv is not None:
            data = _with_contention(data, contention_csv)
        result = solve(data, policy=policy, options=options)
    except InputError as exc:
        _fail(f"invalid input: {exc.one_line()}")
        return
    if output is not None:
        output.write_text(result.model_dump_json(indent=2))
    chosen = output_format or (OutputFormat.TABLE if sys.stdout.isatty() else OutputFormat.JSON)
    if chosen is OutputFormat.JSON and output is None:
        typer.echo(result.model_dump_json(indent=2))
    elif chosen is OutputFormat.TABLE:
        render(result, Console())
    raise typer.Exit(result.status.exit_code)


def _export(data: Any, path: Path, policy: str | None, options: dict[str, Any]) -> None:
    try:
        written = export_model(data, path, policy=policy, options=options)
    except InputError as exc:
        _fail(f"invalid input: {exc.one_line()}")
        return
    except OSError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    if written is None:
        typer.echo("error: this policy needs no model for this snapshot: nothing written", err=True)
        raise typer.Exit(1)
    typer.echo(
        f"wrote {written.path}: model {written.name}, {written.variables} variables "
        f"({written.integer_variables} integer), {written.constraints} constraints, "
        f"{written.nonzeros} nonzeros"
    )


def _fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


def _read_json(path: Path) -> Any:
    try:
        text = sys.stdin.read() if str(path) == "-" else path.read_text()
    except OSError as exc:
        _fail(f"cannot read {path}: {exc.strerror or exc}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        _fail(f"{path} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")


def _with_contention(data: Any, path: Path) -> Any:
    from refdata.deepshare import read_contention_csv

    if isinstance(data, dict) and data.get("contention") is not None:
        raise InputError.single(
            ("contention",), "given both in the snapshot and by --contention-csv; keep one"
        )
    table = read_contention_csv(path)
    return {**data, "contention": table.model_dump()} if isinstance(data, dict) else data


def _parse_options(pairs: list[str]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            _fail(f"--option {pair!r}: expected KEY=VALUE")
        try:
            options[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            options[key.strip()] = value
    return options


def _print_policies() -> None:
    from solver.registry import all_policies

    table = Table("policy", "problem", "what it optimizes", "options")
    for p in all_policies().values():
        table.add_row(p.name, p.problem_class, p.summary, ", ".join(p.options.model_fields))
    Console().print(table)


def render(result: SolveResult, console: Console) -> None:
    """The human view: status line, per-type usage, then the jobs (first rows only)."""
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
    jobs = _job_table(shown, [g.name for g in result.gpu_types])
    console.print(jobs)
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


def main() -> None:
    app(prog_name="solve")
