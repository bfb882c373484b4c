"""The command line's grammar (argparse): `solve [solve] SNAPSHOT [options]` as the main verb,
and `schema`, `policies`, `export`. argparse rather than a richer framework: it loads in a
fraction of the time, and start-up is most of a small solve's (the `startup` bench rows)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import NoReturn

from apportion.cli.estimate import add_estimate
from apportion.cli.inputs import UsageError
from apportion.cli.simulate_args import add_simulate

COMMANDS = ("solve", "schema", "policies", "export", "simulate", "compare", "estimate")
DESCRIPTION = """Exact LP/MILP policies for GPU clusters.

`solve SNAPSHOT.json [OPTIONS]` solves a snapshot (the main verb; `solve solve ...` is the
same). The other commands print the snapshot schema, list the policies, export a model, compare two
snapshots under one policy (`solve compare BEFORE AFTER`, advisory), simulate a job trace
under a policy (`solve simulate --help`), or estimate throughputs (`solve estimate --help`).
Exit codes: 0 an allocation was returned, 1 infeasible or solver failure, 2 invalid input."""


class Parser(argparse.ArgumentParser):
    """argparse, with its errors as one line (exit code 2) instead of usage + error."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def parse(argv: list[str]) -> argparse.Namespace:
    """`argv` without the program name; a first argument naming no command is a snapshot."""
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("-h", "--help")):
        argv = ["solve", *argv]
    return _parser().parse_args(argv)


def _parser() -> Parser:
    top = Parser(
        prog="solve",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = top.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    _solve(commands.add_parser("solve", help="Solve a cluster snapshot (the default)."))
    commands.add_parser("schema", help="Print the snapshot's JSON Schema.")
    listing = commands.add_parser("policies", help="List the policies and their options.")
    listing.add_argument(
        "--json", action="store_true", help="Names, problem class, aliases and option schemas."
    )
    export = commands.add_parser(
        "export", help="Write the model a policy would solve, without solving it."
    )
    export.add_argument("snapshot", type=Path, help="Snapshot JSON file ('-' reads stdin).")
    export.add_argument("target", type=Path, help="Model file to write: .lp or .mps.")
    _model_options(export)
    add_simulate(commands)
    _compare(commands.add_parser("compare", help="What-if: two snapshots under one policy."))
    add_estimate(commands)
    return top


def _compare(command: argparse.ArgumentParser) -> None:
    command.add_argument("before", type=Path, help="Snapshot JSON file ('-' reads stdin).")
    command.add_argument("after", nargs="?", type=Path, help="The other snapshot JSON file.")
    command.add_argument(
        "--patch",
        help='Instead of AFTER: a JSON patch of BEFORE, inline (\'{"gpus": {"v100": 2}}\') or '
        "a file (gpus: type → GPUs to add or remove; add_jobs; remove_jobs; weights: job id → "
        "weight).",
    )
    _model_options(command)
    _limits(command)
    command.add_argument(
        "--format",
        dest="output_format",
        choices=("table", "json"),
        help="table (default on a terminal) or json (default when piped).",
    )


def _solve(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "snapshot", nargs="?", type=Path, help="Snapshot JSON file ('-' reads standard input)."
    )
    _model_options(command)
    command.add_argument(
        "--format",
        dest="output_format",
        choices=("table", "json"),
        help="table (default on a terminal) or json (default when piped).",
    )
    command.add_argument("--output", type=Path, help="Write the JSON result to this file.")
    command.add_argument(
        "--jobs-layout",
        choices=("rows", "columns"),
        help="How the JSON result writes its jobs: rows (a list of job objects) or columns (one "
        "array per field); default: the layout of the snapshot's jobs.",
    )
    _limits(command)
    command.add_argument(
        "--explain",
        action="store_true",
        help="Add the explanation: binding GPU types, shadow prices, and why each job has what "
        "it has (a `why` column in the table).",
    )
    command.add_argument(
        "--contention-csv",
        type=Path,
        help="DeepShare contention CSV (matrix or long form): becomes the snapshot's "
        "`contention` table.",
    )
    # The flags of earlier versions, kept working: `schema`, `policies`, `export` replace them.
    command.add_argument("--export", type=Path, help=argparse.SUPPRESS)
    command.add_argument("--schema", action="store_true", help=argparse.SUPPRESS)
    command.add_argument("--list-policies", action="store_true", help=argparse.SUPPRESS)


def _limits(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--time-limit", type=float, help="Seconds for the whole solve (every model shares them)."
    )
    command.add_argument("--mip-gap", type=float, help="Relative MILP gap.")


def _model_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("--policy", help="Policy, when the snapshot names none.")
    command.add_argument(
        "--backend",
        help="auto (default: HiGHS or Clarabel per model), highs, clarabel, cvxpy, pulp.",
    )
    command.add_argument(
        "--solver", help="The backend's own solver: cvxpy CLARABEL/HIGHS/SCS/..., pulp CBC/HiGHS."
    )
    command.add_argument(
        "-o",
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="Policy option KEY=VALUE (value parsed as JSON); repeat for more.",
    )


def is_terminal() -> bool:
    return sys.stdout.isatty()
