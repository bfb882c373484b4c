"""`apportion-ray` (also `python -m apportion.adapters.ray`): the job queue's commands and the
shared controller on Ray.

    apportion-ray submit --gpus 4 --model resnet50 -- python train.py --epochs 90
    apportion-ray list [--all]
    apportion-ray cancel 7
    apportion-ray run --throughputs table.json [--address auto] [--allow-preemption] ...

Exit codes: 0 done (every round enacted, or printed with `--dry-run`); 1 some round changed
nothing because Ray or apportion failed (each is logged); 2 bad arguments or input, or a Ray
cluster the adapter cannot drive (one line on stderr naming the option, field or problem).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path
from typing import TextIO

import structlog

from apportion.adapters.framework import cli
from apportion.adapters.framework.integration import SetupError
from apportion.adapters.framework.table import load_table
from apportion.adapters.ray.queue import ACTIVE, STATES, JobQueue, QueuedJob, QueueError
from apportion.cli.inputs import UsageError
from apportion.solver.errors import InputError

PROG = "apportion-ray"
QUEUE_FILE = "apportion-ray-queue.sqlite"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="A GPU job queue on Ray, scheduled by an apportion policy round by round.",
        epilog="See docs/RAY.md.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    submit = commands.add_parser("submit", help="queue a job")
    _queue_options(submit)
    submit.add_argument("--gpus", type=int, required=True, metavar="N", help="GPUs the job uses")
    submit.add_argument(
        "--model", required=True, metavar="KEY", help="the job's row of the throughput table"
    )
    submit.add_argument("--weight", type=float, default=1.0, help="its weight (default: 1)")
    submit.add_argument(
        "--cwd", metavar="DIR", help="directory it runs in (default: this one, if it exists there)"
    )
    submit.add_argument("entrypoint", nargs=argparse.REMAINDER, help="-- the command it runs")
    listing = commands.add_parser("list", help="the queue's jobs (queued and running)")
    _queue_options(listing)
    listing.add_argument("--all", action="store_true", help="ended and cancelled jobs too")
    cancel = commands.add_parser("cancel", help="take a job off the queue (stopped if running)")
    _queue_options(cancel)
    cancel.add_argument("job", help="its id")
    _run_parser(commands.add_parser("run", help="run the rounds (the adapter itself)"))
    return parser


def _queue_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--queue-file",
        type=Path,
        default=Path(os.environ.get("APPORTION_RAY_QUEUE_FILE", QUEUE_FILE)),
        metavar="FILE",
        help="the queue's SQLite file (default: $APPORTION_RAY_QUEUE_FILE or %(default)s)",
    )
    parser.add_argument(
        "--queue", default="default", metavar="NAME", help="the queue (default: %(default)s)"
    )


def _run_parser(parser: argparse.ArgumentParser) -> None:
    _queue_options(parser)
    add = parser.add_argument
    add(
        "--throughputs",
        type=Path,
        required=True,
        metavar="FILE",
        help="throughput table: JSON {key: {gpu_type: steps/s}} or CSV",
    )
    add("--address", default="auto", help="the Ray cluster (default: %(default)s)")
    add(
        "--node",
        action="append",
        default=[],
        metavar="NAME",
        help="hand out only these nodes' GPUs (repeatable, or comma-separated; default: all)",
    )
    add(
        "--grace-seconds",
        type=cli._positive,
        default=30.0,
        metavar="SECONDS",
        help="a stopped job's time to checkpoint between SIGTERM and SIGKILL "
        "(default: %(default)s)",
    )
    cli.add_common_options(parser, state="apportion-ray-state.json")


def main(argv: list[str] | None = None, out: TextIO | None = None) -> int:
    """Parse, check, run; the exit code."""
    args = build_parser().parse_args(argv)
    out = out or sys.stdout
    try:
        if args.command == "run":
            return _run(args)
        queue = JobQueue(args.queue_file, args.queue)
        try:
            if args.command == "submit":
                job = _submit(queue, args)
                out.write(f"{job.id}\n")
            elif args.command == "cancel":
                _write(out, [queue.cancel(args.job)])
            else:
                _write(out, queue.jobs(STATES if args.all else ACTIVE))
        finally:
            queue.close()
    except (QueueError, UsageError) as exc:
        return cli.usage_error(PROG, str(exc))
    return 0


def _submit(queue: JobQueue, args: argparse.Namespace) -> QueuedJob:
    command = args.entrypoint[1:] if args.entrypoint[:1] == ["--"] else args.entrypoint
    if not command:
        raise UsageError("entrypoint: give the command after `--`")
    entrypoint = command[0] if len(command) == 1 else shlex.join(command)
    cwd = args.cwd or os.getcwd()
    return queue.submit(args.model, args.gpus, entrypoint, weight=args.weight, cwd=cwd)


def _write(out: TextIO, jobs: list[QueuedJob]) -> None:
    out.write(f"{'id':>5}  {'state':<9} {'gpus':>4}  {'model':<12} {'starts':>6}  command\n")
    for job in jobs:
        out.write(
            f"{job.id:>5}  {job.state:<9} {job.gpus:>4}  {job.key:<12} {job.starts:>6}  "
            f"{job.entrypoint}\n"
        )


def _run(args: argparse.Namespace) -> int:
    cli.configure_logging(args.log_level)
    try:
        from apportion.adapters.ray.controller import RayController
        from apportion.adapters.ray.integration import RayIntegration
        from apportion.adapters.ray.raycluster import RayCluster
    except ImportError as exc:
        raise UsageError(
            f"Ray is not installed ({exc.name}): pip install 'apportion[ray]'"
        ) from None
    try:
        args.policy = cli.check_policy(args.policy)
        settings = cli.settings(args)
        table = load_table(args.throughputs)
        nodes = frozenset(n.strip() for v in args.node for n in v.split(",") if n.strip())
        queue = JobQueue(args.queue_file, args.queue)
        ray = RayCluster(args.address, args.grace_seconds)
        integration = RayIntegration(ray, queue, table, nodes=nodes, settle=not args.dry_run)
        controller = RayController(integration, cli.planner(args), settings)
        controller.check()
    except SetupError as exc:
        return cli.usage_error(PROG, str(exc))
    except InputError as exc:
        return cli.usage_error(PROG, exc.one_line())
    structlog.get_logger("apportion.ray").info(
        "started", scope=integration.scope.describe(), policy=settings.policy
    )
    return cli.run_until_signalled(controller)


def run() -> None:
    """The console script's entry point."""
    raise SystemExit(main())
