"""`solve SNAPSHOT.json`: the allocation on a terminal (table) or to a pipe / file (JSON).

Exit codes: 0 an allocation was returned (optimal, or an incumbent within a limit), 1 infeasible
or solver failure, 2 invalid input: a bad snapshot, option, file or path (one line naming the
field or the file and the reason). Whatever fails, stderr gets one line, never a traceback.
"""

from __future__ import annotations

import argparse
import csv
import gc
import json
import os
import sys
from pathlib import Path
from typing import Any

from apportion.cli.estimate import estimate_command
from apportion.cli.inputs import (
    CommandFailed,
    UsageError,
    check_writable,
    one_line,
    parse_options,
    read_json,
    read_patch,
    write_stdout,
    write_text,
)
from apportion.cli.parser import is_terminal, parse

SIGPIPE_EXIT = 141


def solve_command(args: argparse.Namespace) -> int:
    """Solve a cluster snapshot with an exact LP/MILP policy."""
    if args.schema:
        return schema_command(args)
    if args.list_policies:
        return policies_command(args)
    if args.snapshot is None:
        raise UsageError("missing SNAPSHOT: give a snapshot JSON file (or '-' for stdin)")
    options = _solve_options(args)
    if args.export is not None:
        return _export(args.snapshot, args.export, args.policy, options)
    if args.output is not None:
        check_writable(args.output, "--output")
    data = read_json(args.snapshot)
    if args.contention_csv is not None:
        data = _with_contention(data, args.contention_csv)
    result = _solve(data, args.policy, options)
    del data  # a large snapshot's decoded document is not needed any more
    chosen = args.output_format or ("table" if is_terminal() else "json")
    if args.output is not None or chosen == "json":
        from apportion.solver.result.render import answer_json

        written = answer_json(result, indent=True)
        if args.output is not None:
            write_text(args.output, written, "--output")
        elif chosen == "json":
            write_stdout(written)
    if chosen == "table":
        from apportion.cli.render import Screen, render

        render(result, Screen())
    code: int = result.status.exit_code
    return code


def schema_command(_: argparse.Namespace) -> int:
    """Print the snapshot's JSON Schema."""
    from apportion.solver.snapshot import Snapshot

    print(json.dumps(Snapshot.model_json_schema(), indent=2))
    return 0


def policies_command(args: argparse.Namespace) -> int:
    """List the policies and their options."""
    from apportion.solver.registry import aliases, all_policies, gavel_names

    policies = list(all_policies().values())
    if getattr(args, "json", False):
        listing = [
            {
                "name": p.name,
                "summary": p.summary,
                "problem_class": p.problem_class,
                "aliases": list(aliases(p.name)),
                "gavel_names": gavel_names(p.name),
                "options": p.options.model_json_schema(),
            }
            for p in policies
        ]
        print(json.dumps(listing, indent=2))
        return 0
    from apportion.cli.render import Screen, render_policies

    render_policies(policies, Screen())
    return 0


def export_command(args: argparse.Namespace) -> int:
    """Write the model a policy would solve (readable names), without solving it."""
    return _export(args.snapshot, args.target, args.policy, _solve_options(args))


def compare_command(args: argparse.Namespace) -> int:
    """Solve two snapshots (or one and a patch) under one policy and show the differences."""
    from apportion.solver.compare import compare
    from apportion.solver.errors import InputError

    if (args.after is None) == (args.patch is None):
        raise UsageError("compare: give AFTER or --patch (exactly one)")
    before = read_json(args.before)
    after = read_json(args.after) if args.after is not None else None
    patch = read_patch(args.patch) if args.patch is not None else None
    try:
        answer = compare(before, after, patch, args.policy, _solve_options(args))
    except InputError as exc:
        raise UsageError(f"invalid input: {exc.one_line(limit=None)}") from None
    if (args.output_format or ("table" if is_terminal() else "json")) == "json":
        print(answer.model_dump_json(indent=2))
    else:
        from apportion.cli.render import Screen, render_comparison

        render_comparison(answer, Screen())
    code: int = max(answer.status_before.exit_code, answer.status_after.exit_code)
    return code


def simulate_command(args: argparse.Namespace) -> int:
    """Replay a job trace under a policy (`apportion.cli.simulate`, loaded only for this)."""
    from apportion.cli.simulate import simulate_command as run_simulation

    return run_simulation(args)


COMMANDS = {
    "solve": solve_command,
    "schema": schema_command,
    "policies": policies_command,
    "export": export_command,
    "simulate": simulate_command,
    "compare": compare_command,
    "estimate": estimate_command,
}


def _solve_options(args: argparse.Namespace) -> dict[str, Any]:
    options = parse_options(args.option or [])
    given = {
        "backend": args.backend,
        "solver": args.solver,
        "time_limit": getattr(args, "time_limit", None),
        "mip_gap": getattr(args, "mip_gap", None),
        "explain": getattr(args, "explain", None) or None,
        "jobs_layout": getattr(args, "jobs_layout", None),
    }
    options.update({key: value for key, value in given.items() if value is not None})
    return options


def _solve(data: Any, policy: str | None, options: dict[str, Any]) -> Any:
    from apportion.solver.errors import InputError
    from apportion.solver.pipeline import solve

    try:
        return solve(data, policy=policy, options=options)
    except InputError as exc:
        raise UsageError(f"invalid input: {exc.one_line(limit=None)}") from None


def _export(snapshot: Path, target: Path, policy: str | None, options: dict[str, Any]) -> int:
    from apportion.solver.errors import InputError
    from apportion.solver.pipeline import export_model

    check_writable(target, "--export")
    data = read_json(snapshot)
    try:
        written = export_model(data, target, policy=policy, options=options)
    except InputError as exc:
        raise UsageError(f"invalid input: {exc.one_line(limit=None)}") from None
    except OSError as exc:
        reason = exc.strerror or exc
        raise UsageError(f"--export {target}: cannot write: {reason}") from None
    if written is None:
        sys.stderr.write("error: this policy needs no model for this snapshot: nothing written\n")
        return 1
    print(
        f"wrote {written.path}: model {written.name}, {written.variables} variables "
        f"({written.integer_variables} integer), {written.constraints} constraints, "
        f"{written.nonzeros} nonzeros"
    )
    return 0


def _with_contention(data: Any, path: Path) -> Any:
    from apportion.refdata.deepshare import read_contention_csv
    from apportion.solver.errors import InputError

    if isinstance(data, dict) and data.get("contention") is not None:
        raise UsageError(
            "invalid input: contention: given both in the snapshot and by --contention-csv; "
            "keep one"
        )
    try:
        table = read_contention_csv(path)
    except InputError as exc:
        raise UsageError(f"invalid input: {exc.one_line(limit=None)}") from None
    except (OSError, ValueError, csv.Error) as exc:
        # Bytes that are not UTF-8 text, NUL bytes, values the table rejects: still the file's
        # fault, so exit 2 naming it.
        raise UsageError(f"invalid input: contention_csv: {path}: {exc}") from None
    return {**data, "contention": table.model_dump()} if isinstance(data, dict) else data


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns its exit code. Bad input is one line on stderr and exit
    code 2; an error nothing here expected (a defect, a solver library raising) still ends as
    one line and exit code 1, never a traceback."""
    try:
        args = parse(sys.argv[1:] if argv is None else argv)
        return COMMANDS[args.command](args)
    except UsageError as exc:
        sys.stderr.write(f"error: {one_line(str(exc))}\n")
        return 2
    except CommandFailed as exc:
        sys.stderr.write(f"error: {one_line(str(exc))}\n")
        return 1
    except SystemExit as done:  # --help
        return done.code if isinstance(done.code, int) else 0
    except BrokenPipeError:
        return reader_left()
    except Exception as exc:
        detail = one_line(str(exc)) or "no detail"
        sys.stderr.write(f"error: unexpected {type(exc).__name__}: {detail}\n")
        return 1


def reader_left() -> int:
    """The reader of our output went away (`solve ... | head`): stop quietly, as standard tools
    do, with the exit code of a process ended by SIGPIPE (128 + 13). Output still buffered is
    dropped, so the interpreter's own last flush does not fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return SIGPIPE_EXIT


def run() -> None:
    """The console script: `solve ...`."""
    sys.stdout.flush()
    code = main()
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        code = reader_left()
    # The interpreter's shutdown runs full collections over every object the imports created
    # (scipy, pydantic, the solver library), a sizeable part of a short command's time. A
    # finished command holds nothing that needs collecting, so those objects are set aside;
    # every module's cleanup still runs and the output streams are still flushed.
    gc.freeze()
    raise SystemExit(code)
