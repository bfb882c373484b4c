"""`solve SNAPSHOT.json`: the allocation on a terminal (table) or to a pipe / file (JSON).

Exit codes: 0 an allocation was returned (optimal, or an incumbent within a limit), 1 infeasible
or solver failure, 2 invalid input: a bad snapshot, option, file or path (one line naming the
field or the file and the reason). Whatever fails, stderr gets one line, never a traceback.
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from solver.cli.inputs import (
    UsageError,
    check_writable,
    one_line,
    parse_options,
    read_json,
    write_text,
)

HELP = """Exact LP/MILP policies for GPU clusters.

`solve SNAPSHOT.json [OPTIONS]` solves a snapshot (the main verb; `solve solve ...` is the same).
The other commands print the snapshot schema, list the policies, or export a model."""


class DefaultToSolve(TyperGroup):
    """A group whose first argument, when it names no command, is a snapshot for `solve`."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ("--help", "-h")):
            args = ["solve", *args]
        return super().parse_args(ctx, args)


app = typer.Typer(
    cls=DefaultToSolve,
    add_completion=False,
    no_args_is_help=False,
    rich_markup_mode=None,
    # A defect must still end as one line (see `main`), not as a rich traceback with locals.
    pretty_exceptions_enable=False,
    pretty_exceptions_show_locals=False,
    help=HELP,
)


class OutputFormat(StrEnum):
    TABLE = "table"
    JSON = "json"


Options = Annotated[
    list[str] | None,
    typer.Option("--option", "-o", help="Policy option KEY=VALUE (value parsed as JSON)."),
]
PolicyName = Annotated[str | None, typer.Option(help="Policy, when the snapshot names none.")]
Backend = Annotated[
    str | None,
    typer.Option(help="auto (default: HiGHS or Clarabel per model), highs, clarabel, cvxpy, pulp."),
]
SubSolver = Annotated[
    str | None,
    typer.Option(help="The backend's own solver: cvxpy CLARABEL/HIGHS/SCS/..., pulp CBC/HiGHS."),
]
TimeLimit = Annotated[
    float | None, typer.Option(help="Seconds for the whole solve (every model shares them).")
]
MipGap = Annotated[float | None, typer.Option(help="Relative MILP gap.")]
SnapshotArg = Annotated[
    Path | None, typer.Argument(help="Snapshot JSON file ('-' reads standard input).")
]


@app.command("solve")
def solve_command(
    snapshot: SnapshotArg = None,
    policy: PolicyName = None,
    output_format: Annotated[
        OutputFormat | None,
        typer.Option(
            "--format", help="table (default on a terminal) or json (default when piped)."
        ),
    ] = None,
    output: Annotated[Path | None, typer.Option(help="Write the JSON result to this file.")] = None,
    backend: Backend = None,
    solver: SubSolver = None,
    time_limit: TimeLimit = None,
    mip_gap: MipGap = None,
    contention_csv: Annotated[
        Path | None,
        typer.Option(
            help="DeepShare contention CSV (matrix or long form): becomes the snapshot's "
            "`contention` table."
        ),
    ] = None,
    option: Options = None,
    export: Annotated[Path | None, typer.Option("--export", hidden=True)] = None,
    schema: Annotated[bool, typer.Option("--schema", hidden=True)] = False,
    list_policies: Annotated[bool, typer.Option("--list-policies", hidden=True)] = False,
) -> None:
    """Solve a cluster snapshot with an exact LP/MILP policy."""
    if schema:
        schema_command()
        return
    if list_policies:
        policies_command()
        return
    with _usage_errors():
        if snapshot is None:
            raise UsageError("missing SNAPSHOT: give a snapshot JSON file (or '-' for stdin)")
        options = _solve_options(option, backend, solver, time_limit, mip_gap)
        if export is not None:
            _export(snapshot, export, policy, options)
            return
        if output is not None:
            check_writable(output, "--output")
        data = read_json(snapshot)
        if contention_csv is not None:
            data = _with_contention(data, contention_csv)
        result = _solve(data, policy, options)
        if output is not None:
            write_text(output, result.model_dump_json(indent=2), "--output")
    chosen = output_format or (OutputFormat.TABLE if sys.stdout.isatty() else OutputFormat.JSON)
    if chosen is OutputFormat.JSON and output is None:
        typer.echo(result.model_dump_json(indent=2))
    elif chosen is OutputFormat.TABLE:
        from rich.console import Console

        from solver.cli.render import render

        render(result, Console())
    raise typer.Exit(result.status.exit_code)


@app.command("schema")
def schema_command() -> None:
    """Print the snapshot's JSON Schema."""
    from solver.snapshot import Snapshot

    typer.echo(json.dumps(Snapshot.model_json_schema(), indent=2))


@app.command("policies")
def policies_command(
    as_json: Annotated[
        bool, typer.Option("--json", help="Names, problem class, aliases and option schemas.")
    ] = False,
) -> None:
    """List the policies and their options."""
    from solver.registry import aliases, all_policies

    policies = list(all_policies().values())
    if as_json:
        listing = [
            {
                "name": p.name,
                "summary": p.summary,
                "problem_class": p.problem_class,
                "aliases": list(aliases(p.name)),
                "options": p.options.model_json_schema(),
            }
            for p in policies
        ]
        typer.echo(json.dumps(listing, indent=2))
        return
    from rich.console import Console

    from solver.cli.render import render_policies

    render_policies(policies, Console())


@app.command("export")
def export_command(
    snapshot: Annotated[Path, typer.Argument(help="Snapshot JSON file ('-' reads stdin).")],
    target: Annotated[Path, typer.Argument(help="Model file to write: .lp or .mps.")],
    policy: PolicyName = None,
    backend: Backend = None,
    solver: SubSolver = None,
    option: Options = None,
) -> None:
    """Write the model a policy would solve (readable names), without solving it."""
    with _usage_errors():
        _export(snapshot, target, policy, _solve_options(option, backend, solver, None, None))


def _solve_options(
    pairs: list[str] | None,
    backend: str | None,
    solver: str | None,
    time_limit: float | None,
    mip_gap: float | None,
) -> dict[str, Any]:
    options = parse_options(pairs or [])
    given = {"backend": backend, "solver": solver, "time_limit": time_limit, "mip_gap": mip_gap}
    options.update({key: value for key, value in given.items() if value is not None})
    return options


def _solve(data: Any, policy: str | None, options: dict[str, Any]) -> Any:
    from solver.errors import InputError
    from solver.pipeline import solve

    try:
        return solve(data, policy=policy, options=options)
    except InputError as exc:
        raise UsageError(f"invalid input: {exc.one_line()}") from None


def _export(snapshot: Path, target: Path, policy: str | None, options: dict[str, Any]) -> None:
    from solver.errors import InputError
    from solver.pipeline import export_model

    check_writable(target, "--export")
    data = read_json(snapshot)
    try:
        written = export_model(data, target, policy=policy, options=options)
    except InputError as exc:
        raise UsageError(f"invalid input: {exc.one_line()}") from None
    except OSError as exc:
        reason = exc.strerror or exc
        raise UsageError(f"--export {target}: cannot write: {reason}") from None
    if written is None:
        typer.echo("error: this policy needs no model for this snapshot: nothing written", err=True)
        raise typer.Exit(1)
    typer.echo(
        f"wrote {written.path}: model {written.name}, {written.variables} variables "
        f"({written.integer_variables} integer), {written.constraints} constraints, "
        f"{written.nonzeros} nonzeros"
    )


def _with_contention(data: Any, path: Path) -> Any:
    from refdata.deepshare import read_contention_csv
    from solver.errors import InputError

    if isinstance(data, dict) and data.get("contention") is not None:
        raise UsageError(
            "invalid input: contention: given both in the snapshot and by --contention-csv; "
            "keep one"
        )
    try:
        table = read_contention_csv(path)
    except InputError as exc:
        raise UsageError(f"invalid input: {exc.one_line()}") from None
    except (OSError, ValueError, csv.Error) as exc:
        # Bytes that are not UTF-8 text, NUL bytes, values the table rejects: still the file's
        # fault, so exit 2 naming it.
        raise UsageError(f"invalid input: contention_csv: {path}: {exc}") from None
    return {**data, "contention": table.model_dump()} if isinstance(data, dict) else data


@contextmanager
def _usage_errors() -> Iterator[None]:
    """A `UsageError` becomes one line on stderr and exit code 2."""
    try:
        yield
    except UsageError as exc:
        typer.echo(f"error: {one_line(str(exc))}", err=True)
        raise typer.Exit(2) from None


def main() -> None:
    """Run the command. An error nothing above expected (a defect, a solver library raising)
    still ends as one line on stderr and exit code 1, never a traceback."""
    try:
        app(prog_name="solve")
    except Exception as exc:
        detail = one_line(str(exc)) or "no detail"
        sys.stderr.write(f"error: unexpected {type(exc).__name__}: {detail}\n")
        sys.stderr.flush()
        raise SystemExit(1) from None
