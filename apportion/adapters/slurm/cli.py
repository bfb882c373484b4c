"""`apportion-slurm` (also `python -m adapters.slurm`): the controller as a console script.

Exit codes: 0 every round was enacted (or printed with `--dry-run`); 1 some round changed
nothing because Slurm or apportion failed (each is logged); 2 bad arguments or input (one line
on stderr naming the option or field, and the reason).
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import structlog

from apportion.adapters.slurm.controller import Controller, Settings
from apportion.adapters.slurm.mapping import check_columns, load_table
from apportion.adapters.slurm.planner import LocalPlanner, Planner, RemotePlanner
from apportion.adapters.slurm.slurmcli import Slurm, SlurmError, without_type_feature
from apportion.cli.inputs import UsageError, parse_options
from apportion.solver.errors import InputError

#: Policies whose answer is not time fractions per GPU type: no round can enact them.
NOT_ROUND_BASED = frozenset({"deadline_admission", "contention_placement"})


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="apportion-slurm",
        description="Enact an apportion policy on a Slurm cluster, round by round.",
        epilog="Jobs are matched to throughput rows by --comment=model=KEY, else the job name.",
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
    add(
        "--state",
        type=Path,
        default=Path("apportion-slurm-state.json"),
        metavar="FILE",
        help="the adapter's state file: time received per job and GPU type (default: %(default)s)",
    )
    _add_policy_options(add)
    _add_round_options(add)
    add("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    return parser


def _add_policy_options(add: Callable[..., Any]) -> None:
    add("--policy", default="max_min_fairness", help="policy to solve (default: %(default)s)")
    add(
        "-o",
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a policy option (repeatable), e.g. -o time_limit=5",
    )
    add(
        "--service",
        metavar="URL",
        help="solve with the apportion service at URL instead of in this process",
    )
    add(
        "--service-timeout",
        type=_positive,
        default=60.0,
        metavar="SECONDS",
        help="seconds to wait for the service's answer (default: %(default)s)",
    )


def _add_round_options(add: Callable[..., Any]) -> None:
    add(
        "--round-seconds",
        type=_positive,
        default=360.0,
        metavar="SECONDS",
        help="length of a round (default: %(default)s)",
    )
    add(
        "--rounds",
        type=_count,
        default=None,
        metavar="N",
        help="stop after N rounds (default: run until SIGTERM or SIGINT)",
    )
    add(
        "--round-rule",
        choices=["gavel", "deficit"],
        default="gavel",
        help="which jobs a round serves first: Gavel's share ÷ fraction received, or the "
        "seconds furthest behind the share (default: %(default)s)",
    )
    add(
        "--allow-preemption",
        action="store_true",
        help="requeue running jobs the round does not keep (else they run to the end)",
    )
    add(
        "--dry-run",
        action="store_true",
        help="print the scontrol commands, each job with a one-line reason; change nothing",
    )


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} must be a positive number of seconds")
    return value


def _count(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be a whole number of rounds, at least 1")
    return int(text)


def configure_logging(level: str) -> None:
    """One JSON object per line on stderr, as the service logs."""
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso"),
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(),
        ],
        logger_factory=_current_stderr,
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.getLevelNamesMapping()[level.upper()]
        ),
    )


def _current_stderr(*args: Any) -> structlog.PrintLogger:
    """A logger on the `sys.stderr` of the moment (loggers are not cached): one bound to the
    stream seen at configuration would outlive it when `main` runs inside a host process that
    swaps its streams."""
    return structlog.PrintLogger(sys.stderr)


def prepare(
    args: argparse.Namespace, slurm: Slurm
) -> tuple[dict[str, dict[str, float]], dict[str, Any]]:
    """The checked table and options; `UsageError` or `InputError` for bad input."""
    from apportion.solver.registry import find_policy  # loads the policy: only once arguments parse

    policy = find_policy(args.policy)
    if policy is None:
        raise UsageError(f"--policy {args.policy!r}: no such policy (see `solve policies`)")
    if policy.name in NOT_ROUND_BASED:
        raise UsageError(f"--policy {policy.name}: answers no time fractions for rounds to enact")
    options = parse_options(args.option)
    table = load_table(args.throughputs)
    try:
        nodes = slurm.nodes()
    except SlurmError as exc:
        raise UsageError(f"cannot read the cluster's GPU types: {exc}") from None
    types = {n.gpu_type for n in nodes if n.gpu_type}
    if not types:
        raise UsageError("the cluster has no typed GPUs (node Gres=gpu:TYPE:N)")
    lacking = without_type_feature(nodes)
    if lacking:
        node, kind = next(iter(lacking.items()))
        raise UsageError(
            f"node {node} has {kind} GPUs but no feature {kind!r}: the adapter steers GPU types "
            f"through node features (slurm.conf Feature={kind}; {len(lacking)} node(s) lack one)"
        )
    check_columns(table, types)
    return table, options


def main(argv: list[str] | None = None, slurm: Slurm | None = None) -> int:
    """Parse, check, run; the exit code."""
    args = build_parser().parse_args(argv)
    configure_logging(args.log_level)
    slurm = slurm or Slurm()
    try:
        table, options = prepare(args, slurm)
    except (UsageError, InputError) as exc:
        message = exc.one_line() if isinstance(exc, InputError) else str(exc)
        sys.stderr.write(f"apportion-slurm: error: {message}\n")
        return 2
    planner: Planner = (
        RemotePlanner(args.service, timeout=args.service_timeout)
        if args.service
        else LocalPlanner()
    )
    settings = Settings(
        state=args.state,
        policy=args.policy,
        options=options,
        round_seconds=args.round_seconds,
        rule=args.round_rule,
        rounds=args.rounds,
        allow_preemption=args.allow_preemption,
        dry_run=args.dry_run,
        requeue_wait=min(30.0, args.round_seconds / 2),
    )
    stop = threading.Event()

    def on_signal(number: int, frame: FrameType | None) -> None:
        stop.set()  # finish the round in progress, then exit

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)
    return Controller(slurm, planner, table, settings).run(stop)


def run() -> None:
    """The console script's entry point."""
    sys.exit(main())
