"""What every adapter's command line shares: the policy, planner and round options, JSON logs
on stderr, the controller run until SIGTERM or SIGINT, and the exit codes (0 every round was
enacted or printed; 1 some round changed nothing, or not all it planned, because the
scheduler or apportion failed; 2 bad arguments or input, or another instance manages the same
jobs, one line on stderr naming the option, field or holder; 3 the state file is unusable:
nothing was done, one line saying how to recover)."""

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

from apportion.adapters.framework.controller import Controller, Settings
from apportion.adapters.framework.ledger import StateError
from apportion.adapters.framework.planner import RoundPlanner
from apportion.cli.inputs import UsageError, parse_options

#: Policies whose answer is not time fractions per GPU type: no round can enact them.
NOT_ROUND_BASED = frozenset({"deadline_admission", "contention_placement"})


def add_common_options(parser: argparse.ArgumentParser, state: str) -> None:
    """The state file, policy, planner, round and log options (`state`: the default file)."""
    add = parser.add_argument
    add(
        "--state",
        type=Path,
        default=Path(state),
        metavar="FILE",
        help="the adapter's state file: time received per job and GPU type (default: %(default)s)",
    )
    add(
        "--rebuild-state",
        action="store_true",
        help="when the state file is unusable, rebuild it from the running jobs (each job's "
        "history is lost) instead of refusing to run",
    )
    add("--policy", default="max_min_fairness", help="policy to solve (default: %(default)s)")
    add(
        "-o",
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a policy option (repeatable), e.g. -o time_limit=5",
    )
    add("--service", metavar="URL", help="solve with the apportion service at URL, not here")
    add(
        "--service-timeout",
        type=_positive,
        default=60.0,
        metavar="SECONDS",
        help="seconds to wait for the service's answer (default: %(default)s)",
    )
    _add_round_options(add)
    add("--log-level", default="info", choices=["debug", "info", "warning", "error"])


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
        help="print the commands, each job with a one-line reason; change nothing",
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


def check_policy(name: str) -> str:
    """The policy's registered name; `UsageError` when there is none or rounds cannot enact
    its answer."""
    from apportion.solver.registry import find_policy  # loads the policy: only once arguments parse

    policy = find_policy(name)
    if policy is None:
        raise UsageError(f"--policy {name!r}: no such policy (see `solve policies`)")
    if policy.name in NOT_ROUND_BASED:
        raise UsageError(f"--policy {policy.name}: answers no time fractions for rounds to enact")
    return policy.name


def settings(args: argparse.Namespace) -> Settings:
    """The controller's settings from the common options; `UsageError` for a bad one."""
    return Settings(
        state=args.state,
        policy=args.policy,
        options=parse_options(args.option),
        round_seconds=args.round_seconds,
        rule=args.round_rule,
        rounds=args.rounds,
        allow_preemption=args.allow_preemption,
        dry_run=args.dry_run,
        requeue_wait=min(30.0, args.round_seconds / 2),
        rebuild_state=args.rebuild_state,
    )


def planner(args: argparse.Namespace) -> RoundPlanner:
    """In process, or the service at `--service`."""
    if args.service:
        return RoundPlanner.remote(args.service, timeout=args.service_timeout)
    return RoundPlanner()


def usage_error(prog: str, message: str) -> int:
    """One line on stderr; exit code 2."""
    sys.stderr.write(f"{prog}: error: {message}\n")
    return 2


#: Exit code of an adapter that refused to act on an unusable state file.
STATE_REFUSED = 3


def refused(prog: str, exc: StateError) -> int:
    """One line on stderr; exit code 3."""
    sys.stderr.write(f"{prog}: error: {exc}\n")
    return STATE_REFUSED


def run_until_signalled(controller: Controller[Any, Any], prog: str = "apportion") -> int:
    """Run rounds until done or SIGTERM / SIGINT (the round in progress finishes first)."""
    stop = threading.Event()

    def on_signal(number: int, frame: FrameType | None) -> None:
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)
    try:
        return controller.run(stop)
    except StateError as exc:  # the file broke between the check and the first round
        return refused(prog, exc)


def configure_logging(level: str) -> None:
    """One JSON object per line on stderr, as the service logs; the client's own records (its
    retries) go the same way instead of as plain text through logging's last resort."""
    client = logging.getLogger("apportion.client")
    client.handlers[:] = [_AsJson()]
    client.propagate = False
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


class _AsJson(logging.Handler):
    """Hands a standard-library record to structlog: event `client`, its text as `message`, at
    the record's level."""

    def emit(self, record: logging.LogRecord) -> None:
        structlog.get_logger(record.name).log(record.levelno, "client", message=record.getMessage())


def _current_stderr(*args: Any) -> structlog.PrintLogger:
    """A logger on the `sys.stderr` of the moment (loggers are not cached): one bound to the
    stream seen at configuration would outlive it when `main` runs inside a host process that
    swaps its streams."""
    return structlog.PrintLogger(sys.stderr)
