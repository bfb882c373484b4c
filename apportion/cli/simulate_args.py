"""The grammar of `solve simulate` (argparse only: `solve --help` must not load the simulator)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from apportion.simulator.config import SimConfig
from apportion.simulator.kinds import KINDS, NAMES

MODES = ("auto", "rounds", "leases", "placement", "schedule")

DESCRIPTION = """Replay a job trace under a policy and report job completion times, deadlines
met, utilization and policy time.

  solve simulate gavel --policy max_min_fairness
  solve simulate poisson 4 --jobs 1000 --policy max_min_fairness,max_min_agnostic --seed 0,1
  solve simulate chronus --policy deadline_admission --lease-seconds 1200
  solve simulate chronus --policy deadline_admission,chronus_one_by_one,edf,srtf --mode leases \
      --overhead chronus --cluster gpu=16 --gpus-per-node 8 --load 3.5
  solve simulate deepshare --policy contention_placement -o w1=0.7 --output records.csv
  solve simulate sia --policy sia,ones_search --jobs 25
  solve simulate philly --load 1.25 --policy yarn_cs,tiresias_las --mode schedule \
        --preemption-seconds 62

SOURCE is a trace file (bundled defaults when left out) or, for poisson, the arrival rate in
jobs per hour. Several policies, seeds or loads (comma-separated) make a sweep, run in a
process pool (--workers) or on Ray (--executor ray). Exit codes: 0 done, 1 a policy failed,
2 invalid input.

Trace kinds (SOURCE; default cluster):
""" + "\n".join(f"  {k.name:<10} {k.source}; {k.cluster}" for k in KINDS)


class Help(argparse.RawDescriptionHelpFormatter):
    """The description as written, and every option's default after its help: the value where
    the option has one, the words of its help where it says what happens when left out."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        unset = default is None or default is False or default in ([], argparse.SUPPRESS)
        if "default" in text or unset or not action.option_strings:
            return text
        return f"{text} (default: %(default)s)"


def add_simulate(commands: Any) -> None:
    """The `simulate` subcommand on `commands` (the parser's subparsers action)."""
    command: argparse.ArgumentParser = commands.add_parser(
        "simulate",
        help="Replay a job trace under a policy (JCT, deadlines, utilization).",
        description=DESCRIPTION,
        formatter_class=Help,
    )
    command.add_argument("kind", choices=NAMES, help="Trace kind.")
    command.add_argument(
        "source", nargs="?", help="Trace file, or jobs per hour for poisson (default: bundled)."
    )
    _policy(command)
    _timing(command)
    _costs(command)
    _trace(command)
    _belief(command)
    _execution(command)
    _output(command)


def _policy(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--policy",
        default="max_min_fairness",
        help="apportion policy (or an alias, or Gavel's name: max_min_fairness_perf, "
        "max_min_fairness_packed, ...; `solve policies` lists them) or baseline (srtf, las, "
        "2d_las, edf, fifo_baseline, yarn_cs, max_min_agnostic); comma-separated for a sweep. "
        "On sia traces an elastic policy (sia, ones, elastic_max_min, elastic_max_goodput) or "
        "ones_search (ONES's search) runs the jobs elastic.",
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
        "--http",
        metavar="URL",
        help="Call a running service's POST /v1/solve at URL (default: solve in this process).",
    )


def _timing(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--round-seconds",
        type=float,
        help="Round length; 60 (Sia's) for an elastic policy unless given (default: 360.0).",
    )
    command.add_argument(
        "--round-rule",
        choices=("gavel", "deficit"),
        help="Who runs first each round: gavel (share ÷ fraction received) or deficit "
        f"(seconds furthest behind the share) (default: {SimConfig.round_rule}).",
    )
    command.add_argument(
        "--round-order",
        choices=("priority", "types"),
        help="How a round is served: priority (one queue, a job runs only where it has time) "
        "or types (Gavel's queue per GPU type, fastest first, left-over GPUs to waiting "
        f"jobs) (default: {SimConfig.round_order}).",
    )
    command.add_argument("--lease-seconds", type=float, default=1200.0, help="Lease length.")
    command.add_argument(
        "--call-seconds",
        type=float,
        help="Leases mode: ask the policy this often and at lease boundaries (default: at "
        "every arrival, completion and lease boundary).",
    )
    command.add_argument(
        "--resolve",
        help="When to re-solve: arrivals,completions,every:N,interval:SECONDS,backfill, or gavel "
        "(Gavel's: arrivals and completions at least 1,920 s apart, new jobs back-filled); "
        "default: arrivals,completions for policies, every round for baselines.",
    )
    command.add_argument(
        "--max-time",
        type=float,
        help="Stop at this simulated second (default: when every job that can finish has).",
    )
    command.add_argument(
        "--events",
        action="store_true",
        help="Event-driven in any mode: decide at every arrival, completion and queue change, "
        "not only at round or lease boundaries.",
    )


def _costs(command: argparse.ArgumentParser) -> None:
    """What running costs a job: restarts and co-runners; and what a policy is told of the past."""
    command.add_argument(
        "--preemption-seconds",
        type=float,
        default=0.0,
        help="Seconds a job loses each time it moves to other GPUs (--overhead fixed).",
    )
    command.add_argument(
        "--overhead",
        choices=("fixed", "chronus"),
        default="fixed",
        help="Restart overhead for every policy alike: fixed (--preemption-seconds per move) or "
        "chronus (30 + 30 log2 g seconds at every start of a g-GPU job, the first included).",
    )
    command.add_argument(
        "--contention",
        choices=("current", "reference"),
        default="current",
        help="How co-runners slow a job (traces with a contention table): its worst co-runner "
        "now (current), or DeepShare's simulator (reference: ratios floored at 0.35 that never "
        "recover while the job runs).",
    )
    command.add_argument(
        "--service-distribution",
        metavar="yarn|FILE",
        help="Past jobs' GPU-seconds for tiresias_gittins: yarn (Tiresias's 10,000 YARN "
        "samples) or a CSV with a `duration` column.",
    )


def _trace(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--cluster",
        metavar="TYPE=GPUS,...",
        help="Replace the cluster, e.g. v100=36,k80=36, or in Gavel's V100:P100:K80 form, "
        "e.g. 36:36:36 (default: the trace kind's, listed above).",
    )
    command.add_argument(
        "--throughputs",
        type=Path,
        metavar="FILE",
        help="Gavel's throughputs file (its --throughputs_file, e.g. simulation_throughputs.json) "
        "for gavel and poisson traces (default: the bundled copy of Gavel's table).",
    )
    command.add_argument(
        "--gpus-per-node",
        type=int,
        help="Node size for --cluster (default: 4; 8 for chronus and deepshare).",
    )
    command.add_argument(
        "--jobs",
        type=int,
        help="Jobs to generate (poisson) or keep (files) (default: 100 for poisson, every job "
        "of a file).",
    )
    command.add_argument("--seed", default="0", help="Seed(s), comma-separated.")
    command.add_argument(
        "--load",
        help="Arrival-rate factor(s) for file traces, jobs per hour for poisson; comma-separated "
        "(default: the trace's own arrivals).",
    )


def _belief(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--throughput-noise",
        default="0",
        metavar="SIGMA",
        help="Rounds mode: the policy believes each throughput times a seeded lognormal error "
        "e^(SIGMA z), or with 'gavel' Gavel's measured ÷ oracle ratio for the job's type; the "
        "jobs run at the truth (default 0).",
    )
    command.add_argument(
        "--estimator",
        choices=("oracle", "none", "online"),
        default="oracle",
        help="What the policy believes: the truth (oracle, default), the noisy first belief "
        "(none), or that belief learned from observed progress (online).",
    )
    _remaining(command)
    command.add_argument(
        "--known-start",
        action="store_true",
        help="Elastic policies: a job that has not run yet is worth its single-GPU throughput "
        "on each type (Sia's sia_read_throughputs_before_first_run); left out, 1 on every "
        "type (Sia's default, a tie).",
    )


def _remaining(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--remaining-noise",
        metavar="SIGMA",
        help="Leases mode: the policy believes each job's remaining time times a lognormal "
        "error e^(SIGMA z), z drawn once per (--seed, job); jobs run and deadlines are scored "
        "at the truth (default: 0, the truth).",
    )
    command.add_argument(
        "--remaining-margin",
        choices=("derived", "none"),
        help="With --remaining-noise: the margin sent as each job's remaining_time_uncertainty: "
        "derived from SIGMA, e^(SIGMA q) - 1 with q the --remaining-level quantile (derived), "
        "or none (the belief taken as exact) (default: derived).",
    )
    command.add_argument(
        "--remaining-level",
        metavar="Q",
        help="With --remaining-noise: the probability the margin holds, in [0.5, 1) "
        "(default: 0.999).",
    )
    command.add_argument(
        "--remaining-estimator",
        choices=("none", "online"),
        help="With --remaining-noise: the first belief kept (none), or tightened by the "
        "progress seen as the job runs (online) (default: none).",
    )


def _execution(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--workers",
        type=int,
        help="Worker processes for a sweep (default: one per core); with --executor ray and no "
        "address, the CPUs of the local Ray.",
    )
    command.add_argument(
        "--executor",
        choices=("processes", "ray"),
        default="processes",
        help="Where a sweep's runs execute: a process pool here (default), or tasks on Ray "
        "(a local Ray, or the cluster at --ray-address; needs apportion[ray]).",
    )
    command.add_argument(
        "--ray-address",
        metavar="ADDRESS",
        help="The Ray cluster for --executor ray (default: RAY_ADDRESS, else a local Ray "
        "started for the sweep).",
    )


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
