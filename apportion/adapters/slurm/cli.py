"""`apportion-slurm` (also `python -m apportion.adapters.slurm`): the shared controller on
Slurm as a console script.

Exit codes: 0 every round was enacted (or printed with `--dry-run`); 1 some round changed
nothing, or not all it planned, because Slurm or apportion failed (each is logged); 2 bad
arguments or input, a Slurm the adapter cannot drive, or another instance managing the same
jobs (one line on stderr naming the option, field, problem or holder's pid); 3 the state file
is unusable, so nothing was done (one line saying how to recover; `--rebuild-state`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import structlog

from apportion.adapters.framework import cli
from apportion.adapters.framework.controller import Controller
from apportion.adapters.framework.integration import SetupError
from apportion.adapters.framework.ledger import StateError
from apportion.adapters.framework.table import load_table
from apportion.adapters.slurm.integration import SlurmIntegration
from apportion.adapters.slurm.scope import Scope
from apportion.adapters.slurm.slurmcli import Slurm
from apportion.cli.inputs import UsageError
from apportion.solver.errors import InputError

PROG = "apportion-slurm"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Enact an apportion policy on a Slurm cluster, round by round.",
        epilog="Jobs are matched to throughput rows by --comment=model=KEY, else the job name. "
        "See docs/SLURM.md.",
    )
    add = parser.add_argument
    add(
        "--throughputs",
        type=Path,
        required=True,
        metavar="FILE",
        help="throughput table: JSON {key: {gpu_type: steps/s}} or CSV (key, then one column "
        "per GPU type)",
    )
    scope = parser.add_argument_group("scope (default: every job of the cluster)")
    scope.add_argument(
        "--partition",
        action="append",
        default=[],
        metavar="NAME",
        help="manage jobs of this partition on its nodes only (repeatable, or comma-separated)",
    )
    scope.add_argument(
        "--account",
        action="append",
        default=[],
        metavar="NAME",
        help="manage jobs of this account only (repeatable, or comma-separated)",
    )
    scope.add_argument(
        "--job-flag",
        metavar="WORD",
        help="manage only jobs whose comment carries WORD (--comment=WORD,model=KEY)",
    )
    cli.add_common_options(parser, state="apportion-slurm-state.json")
    return parser


def scope_of(args: argparse.Namespace) -> Scope:
    def names(values: list[str]) -> frozenset[str]:
        return frozenset(n.strip() for v in values for n in v.split(",") if n.strip())

    flag = args.job_flag.strip() if args.job_flag is not None else None
    if flag is not None and (not flag or any(c in flag for c in " ,;=")):
        raise UsageError(f"--job-flag {args.job_flag!r}: one word, without spaces, ',', ';', '='")
    return Scope(names(args.partition), names(args.account), flag)


def main(argv: list[str] | None = None, slurm: Slurm | None = None) -> int:
    """Parse, check, run; the exit code."""
    args = build_parser().parse_args(argv)
    cli.configure_logging(args.log_level)
    try:
        args.policy = cli.check_policy(args.policy)
        settings = cli.settings(args)
        table = load_table(args.throughputs)
        integration = SlurmIntegration(slurm or Slurm(), table, scope_of(args))
        controller = Controller(integration, cli.planner(args), settings)
        controller.check()
    except StateError as exc:
        return cli.refused(PROG, exc)
    except (UsageError, SetupError) as exc:
        return cli.usage_error(PROG, str(exc))
    except InputError as exc:
        return cli.usage_error(PROG, exc.one_line())
    structlog.get_logger(f"apportion.{integration.name}").info(
        "started", scope=integration.scope.describe(), policy=settings.policy
    )
    return cli.run_until_signalled(controller, PROG)


def run() -> None:
    """The console script's entry point."""
    raise SystemExit(main())
