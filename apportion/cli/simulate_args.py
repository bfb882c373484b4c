"""The grammar of `solve simulate` (argparse only: `solve --help` must not load the simulator)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

#: Kept here rather than read from `simulator.sources`, which would load pydantic at start-up.
TRACE_KINDS = ("gavel", "poisson", "chronus", "deepshare", "tiresias")
MODES = ("auto", "rounds", "leases", "placement")

DESCRIPTION = """Replay a job trace under a policy and report job completion times, deadlines
met, utilization and policy time.

  solve simulate gavel --policy max_min_fairness
  solve simulate poisson 4 --jobs 1000 --policy max_min_fairness,max_min_agnostic --seed 0,1
  solve simulate chronus --policy deadline_admission --lease-seconds 1200
  solve simulate deepshare --policy contention_placement -o w1=0.7 --output records.csv

SOURCE is a trace file (bundled defaults when left out) or, for poisson, the arrival rate in
jobs per hour. Several policies, seeds or loads (comma-separated) make a sweep, run in a
process pool (--workers). Exit codes: 0 done, 1 a policy failed, 2 invalid input."""


def add_simulate(commands: Any) -> None:
    """The `simulate` subcommand on `commands` (the parser's subparsers action)."""
    command: argparse.ArgumentParser = commands.add_parser(
        "simulate",
        help="Replay a job trace under a policy (JCT, deadlines, utilization).",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    command.add_argument("kind", choices=TRACE_KINDS, help="Trace kind.")
    command.add_argument(
        "source", nargs="?", help="Trace file, or jobs per hour for poisson (default: bundled)."
    )
    _policy(command)
    _timing(command)
    _trace(command)
    _output(command)


def _policy(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--policy",
        default="max_min_fairness",
        help="apportion policy or baseline (srtf, las, 2d_las, edf, fifo_baseline, "
        "max_min_agnostic); comma-separated for a sweep.",
    )
    command.add_argument(
        "-o",
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="Policy option KEY=VALUE (value parsed as JSON); repeat for more.",
    )
    command.add_argument("--mode", choices=MODES, default="auto", help="Enactment mode.")
    command.add_argument(
        "--http", metavar="URL", help="Call a running service's POST /v1/solve at URL."
    )


def _timing(command: argparse.ArgumentParser) -> None:
    command.add_argument("--round-seconds", type=float, default=360.0, help="Round length.")
    command.add_argument(
        "--round-rule",
        choices=("gavel", "deficit"),
        default="gavel",
        help="Who runs first each round: gavel (share ÷ fraction received) or deficit "
        "(seconds furthest behind the share).",
    )
    command.add_argument("--lease-seconds", type=float, default=1200.0, help="Lease length.")
    command.add_argument(
        "--call-seconds",
        type=float,
        help="Leases mode: ask the policy this often (default: at every lease boundary).",
    )
    command.add_argument(
        "--resolve",
        help="When to re-solve: arrivals,completions,every:N (default: arrivals,completions "
        "for policies, every round for baselines).",
    )
    command.add_argument(
        "--preemption-seconds",
        type=float,
        default=0.0,
        help="Seconds a job loses each time it moves to other GPUs.",
    )
    command.add_argument("--max-time", type=float, help="Stop at this simulated second.")


def _trace(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--cluster", metavar="TYPE=GPUS,...", help="Replace the cluster, e.g. v100=36,k80=36."
    )
    command.add_argument("--gpus-per-node", type=int, help="Node size for --cluster.")
    command.add_argument(
        "--jobs", type=int, help="Jobs to generate (poisson, default 100) or keep (files)."
    )
    command.add_argument("--seed", default="0", help="Seed(s), comma-separated.")
    command.add_argument(
        "--load",
        help="Arrival-rate factor(s) for file traces, jobs per hour for poisson; comma-separated.",
    )
    command.add_argument("--workers", type=int, help="Worker processes for a sweep.")


def _output(command: argparse.ArgumentParser) -> None:
    command.add_argument("--output", type=Path, help="Write the per-job records (CSV).")
    command.add_argument("--timeseries", type=Path, help="Write the time series (CSV).")
    command.add_argument("--summary", type=Path, help="Write the summary (JSON).")
    command.add_argument(
        "--format",
        dest="output_format",
        choices=("table", "json"),
        help="Summary as a table (default on a terminal) or JSON (default when piped).",
    )
    command.add_argument(
        "--no-progress", action="store_true", help="No progress bar (none when piped)."
    )
