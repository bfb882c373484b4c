"""Try apportion-slurm on a small real Slurm cluster, in one command (as root, on Debian; from
another user, begin it with sudo):

    .venv/bin/python -m apportion.adapters.slurm.tryout [--rounds 3] [--round-seconds 10]

It installs Slurm's Debian packages when they are missing (saying so first), starts a cluster
of four nodes under a temporary directory (`local.cluster`: n1, n2 with 8 V100 each, n3, n4
with 8 K80 each; GPU jobs held at submission, as docs/SLURM.md recommends), submits a few jobs
as users would (untyped GPU requests, a typed one, one the table has no row for), prints the
first round as a dry run, then runs the rounds for real, printing what each did and what Slurm
then shows, and the time each job received. It stops every daemon and job it started and
removes the directory, whatever happens. Exit code 0 when every round was enacted, 1 otherwise
(or when no cluster could be started: the line says why), 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import TextIO

from apportion.adapters.framework import (
    Controller,
    Kind,
    ReadError,
    RoundPlanner,
    RoundReport,
    Settings,
    SetupError,
)
from apportion.adapters.framework.cli import configure_logging
from apportion.adapters.framework.view import write_ledger
from apportion.adapters.slurm.integration import SlurmIntegration
from apportion.adapters.slurm.local.cluster import (
    GPUS_PER_NODE,
    NODES,
    Cluster,
    Unavailable,
    running,
)
from apportion.adapters.slurm.local.packages import ensure
from apportion.adapters.slurm.slurmcli import Slurm, SlurmJob

TABLE = {
    "resnet50": {"v100": 4.0, "k80": 1.0},
    "lm": {"v100": 2.0, "k80": 1.0},
    "gan": {"v100": 3.0, "k80": 2.0},
}
#: What users submit (sbatch options): 38 GPUs asked for on 32.
JOBS = (
    "--gres=gpu:8 --comment=model=resnet50",
    "--gres=gpu:8 --comment=model=lm",
    "--gres=gpu:4 --comment=model=gan",
    "--gres=gpu:4 --comment=model=gan,weight=2",
    "--gres=gpu:2 --job-name=resnet50",
    "--gres=gpu:k80:2 --comment=model=lm",
    "--gres=gpu:8 --comment=model=lm",
    "--gres=gpu:2 --comment=model=bert",
)


PROG = "python -m apportion.adapters.slurm.tryout"


class _Help(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Each option's default in its help; the epilog's command kept on its own line."""


def command() -> str:
    """The command to run the try-out with, from this user: sudo only when not root already
    (a root container has no sudo)."""
    return ("" if os.geteuid() == 0 else "sudo ") + f"{sys.executable} -m {PROG.split()[-1]}"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Start a small real Slurm cluster, submit jobs, run apportion-slurm rounds\n"
        "on it, print what happened, stop everything (needs root).",
        epilog=f"run it as:\n  {command()}",
        formatter_class=_Help,
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        choices=range(1, 21),
        metavar="N",
        help="rounds to run for real after the dry run (1 to 20)",
    )
    parser.add_argument(
        "--round-seconds",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="length of a round (2 to 600)",
    )
    parser.add_argument("--policy", default="max_min_fairness", help="the policy each round solves")
    return parser


def main(argv: list[str] | None = None, out: TextIO | None = None) -> int:
    args = build_parser().parse_args(argv)
    out = out or sys.stdout
    if not 2.0 <= args.round_seconds <= 600.0:
        sys.stderr.write("tryout: error: --round-seconds must lie between 2 and 600\n")
        return 2
    configure_logging("error")  # the try-out prints what happened; the JSON log stays quiet
    root = Path(tempfile.mkdtemp(prefix="apportion-slurm-tryout-"))
    try:
        ensure(say=_saying(out))
        with running(root, hold_partitions=("gpu",)) as cluster:
            try:
                return _try(cluster, args, out)
            finally:
                out.write(f"\nstopped the cluster and removed {root}\n")
    except (Unavailable, RuntimeError) as exc:  # RuntimeError: a daemon or command failed
        again = "" if os.geteuid() == 0 else f" (run it as root: {command()})"
        sys.stderr.write(f"tryout: {exc}{again}\n")
        return 1
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _saying(out: TextIO) -> Callable[[str], None]:
    """A line written to `out` at once (the apt-get that follows is silent for a while)."""

    def say(line: str) -> None:
        out.write(f"{line}\n")
        out.flush()

    return say


def _try(cluster: Cluster, args: argparse.Namespace, out: TextIO) -> int:
    nodes = ", ".join(f"{n} ({GPUS_PER_NODE} {kind.upper()})" for n, kind in NODES.items())
    out.write(f"a Slurm cluster under {cluster.root}: {nodes}\n")
    out.write("GPU jobs submitted to partition gpu are held until a round starts them\n\n")
    out.write("throughputs (steps/s per GPU type, the operator's table):\n")
    for key, row in TABLE.items():
        out.write(f"  {key:<9} " + "  ".join(f"{k} {v:g}" for k, v in row.items()) + "\n")
    out.write("\nsubmitted:\n")
    for options in JOBS:
        job = cluster.sbatch(*options.split(), seconds=3600)
        out.write(f"  job {job}: sbatch {options} train.sh\n")
    integration = SlurmIntegration(Slurm(cluster.env), TABLE)
    try:
        integration.check()
    except SetupError as exc:
        raise Unavailable(str(exc)) from None
    settings = Settings(
        cluster.root / "state.json",
        policy=args.policy,
        round_seconds=args.round_seconds,
        rule="deficit",
        allow_preemption=True,
        requeue_wait=min(30.0, args.round_seconds / 2),
    )
    dry = io.StringIO()
    Controller(integration, RoundPlanner(), _dry(settings), out=dry).step()
    out.write(f"\nthe first round as a dry run (apportion-slurm --dry-run):\n{dry.getvalue()}")
    controller = Controller(integration, RoundPlanner(), settings)
    failures = 0
    for _ in range(args.rounds):
        started = time.monotonic()
        outcome = controller.step()
        failures += outcome.error is not None
        _report(outcome, _settled(cluster, integration, outcome), out)
        time.sleep(max(0.0, args.round_seconds - (time.monotonic() - started)))
    controller.step()  # count the last round's time
    write_ledger(controller.ledger.received if controller.ledger else {}, out)
    return 1 if failures else 0


def _dry(settings: Settings) -> Settings:
    return Settings(**{**settings.__dict__, "dry_run": True})


def _settled(
    cluster: Cluster, integration: SlurmIntegration, outcome: RoundReport[SlurmJob]
) -> dict[str, SlurmJob]:
    """Slurm's jobs once each job the round runs is running (at most 10 s)."""
    deadline = time.monotonic() + 10.0
    runs = {a.job for a in outcome.actions if a.kind in (Kind.START, Kind.MOVE, Kind.KEEP)}
    jobs: dict[str, SlurmJob] = {}
    while True:
        with suppress(ReadError):  # shown as last read; the next round says what failed
            jobs = {j.id: j for j in integration.read().jobs}
        if all(jobs[j].running for j in runs if j in jobs) or time.monotonic() > deadline:
            return jobs
        time.sleep(0.3)


def _report(outcome: RoundReport[SlurmJob], jobs: dict[str, SlurmJob], out: TextIO) -> None:
    out.write(f"\nround {outcome.number}")
    if outcome.error is not None:
        out.write(f": changed nothing: {outcome.error}\n")
        return
    status = outcome.decision.status if outcome.decision else "-"
    out.write(f" ({status} allocation; {len(outcome.failed)} command(s) refused)\n")
    for action in outcome.actions:
        job = jobs.get(action.job)
        now = "gone" if job is None else job.state.lower()
        if job is not None and job.running:
            where = "+".join(f"{n}:{g}" for n, g in job.placement.items())
            now += f" on {job.running_type} ({where})"
        elif job is not None and job.held:
            now += " (held)"
        out.write(f"  job {action.job:<3} {action.kind:<7} {action.reason}\n")
        out.write(f"  {'':<3}     Slurm now: {now}\n")


if __name__ == "__main__":
    raise SystemExit(main())
