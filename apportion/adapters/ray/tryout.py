"""Try apportion-ray on a small real Ray cluster, in one command (no root needed):

    .venv/bin/python -m apportion.adapters.ray.tryout [--rounds 3] [--round-seconds 5]
        [--round-rule gavel]

It starts a Ray cluster of three raylets on this host (`local.cluster`: n1, n2 with 8 V100
each, n3 with 8 K80; fake GPUs), queues a few jobs as users would (`apportion-ray submit`; one
the table has no row for), prints the first round as a dry run, then runs the rounds for real,
printing what each did and what Ray then holds (`placement_group_table()`), and the time each
job received. It stops the cluster (every raylet, actor and job entrypoint) and removes its
directory, whatever happens. Exit code 0 when every round was enacted, 1 otherwise (or when no
cluster could be started: the line says why), 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import io
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import TextIO

from apportion.adapters.framework import RoundPlanner, RoundReport, Settings
from apportion.adapters.framework.actions import nodes_text
from apportion.adapters.framework.cli import configure_logging
from apportion.adapters.framework.view import write_ledger
from apportion.adapters.ray.controller import RayController
from apportion.adapters.ray.integration import RayIntegration
from apportion.adapters.ray.local.cluster import LocalRay, Unavailable, running
from apportion.adapters.ray.queue import JobQueue, QueuedJob
from apportion.adapters.ray.raycluster import RayCluster, RayError
from apportion.adapters.ray.scope import Scope

TABLE = {
    "resnet50": {"v100": 4.0, "k80": 1.0},
    "lm": {"v100": 2.0, "k80": 1.0},
    "gan": {"v100": 3.0, "k80": 2.0},
}
#: What users queue (GPUs, model, weight): 36 GPUs asked for on 24.
JOBS: tuple[tuple[int, str, float], ...] = (
    (8, "resnet50", 1.0),
    (8, "lm", 1.0),
    (4, "gan", 1.0),
    (4, "gan", 2.0),
    (2, "lm", 1.0),
    (8, "lm", 1.0),
    (2, "bert", 1.0),
)
#: The jobs' entrypoint: a training loop that would checkpoint on SIGTERM.
ENTRYPOINT = "exec sleep 3600"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m apportion.adapters.ray.tryout",
        description="Start a small real Ray cluster (fake GPUs), queue jobs, run apportion-ray "
        "rounds on it, print what happened, stop everything.",
    )
    add = parser.add_argument
    add(
        "--rounds",
        type=int,
        default=3,
        choices=range(1, 21),
        metavar="N",
        help="rounds to run, 1 to 20 (default: %(default)s)",
    )
    add(
        "--round-seconds",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="length of a round (default: %(default)s)",
    )
    add("--policy", default="max_min_fairness", help="policy to solve (default: %(default)s)")
    add(
        "--round-rule",
        choices=["gavel", "deficit"],
        default="gavel",
        help="which jobs a round serves first (default: %(default)s)",
    )
    return parser


def main(argv: list[str] | None = None, out: TextIO | None = None) -> int:
    args = build_parser().parse_args(argv)
    out = out or sys.stdout
    if not 1.0 <= args.round_seconds <= 600.0:
        sys.stderr.write("tryout: error: --round-seconds must lie between 1 and 600\n")
        return 2
    configure_logging("error")  # the try-out prints what happened; the JSON log stays quiet
    root = Path(tempfile.mkdtemp(prefix="apportion-ray-tryout-"))
    try:
        with running() as cluster:
            try:
                return _try(cluster, root, args, out)
            finally:
                out.write(f"\nstopped the Ray cluster and removed {root}\n")
    except (Unavailable, RayError) as exc:
        sys.stderr.write(f"tryout: {exc}\n")
        return 1
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _try(cluster: LocalRay, root: Path, args: argparse.Namespace, out: TextIO) -> int:
    nodes = ", ".join(f"{n} ({g} {kind.upper()})" for n, (kind, g) in cluster.nodes.items())
    out.write(f"a Ray cluster at {cluster.address}: {nodes}\n\n")
    out.write("throughputs (steps/s per GPU type, the operator's table):\n")
    for key, row in TABLE.items():
        out.write(f"  {key:<9} " + "  ".join(f"{k} {v:g}" for k, v in row.items()) + "\n")
    queue = JobQueue(root / "queue.sqlite")
    out.write(f"\nqueued (in {queue.path}):\n")
    for gpus, model, weight in JOBS:
        job = queue.submit(model, gpus, ENTRYPOINT, weight=weight)
        extra = f" --weight {weight:g}" if weight != 1.0 else ""
        out.write(f"  job {job.id}: apportion-ray submit --gpus {gpus} --model {model}{extra}")
        out.write(f" -- {ENTRYPOINT}\n")
    settings = Settings(
        root / "state.json",
        policy=args.policy,
        round_seconds=args.round_seconds,
        rule=args.round_rule,
        allow_preemption=True,
    )
    dry = io.StringIO()
    RayController(
        _integration(cluster, queue, settle=False), RoundPlanner(), _dry(settings), out=dry
    ).step()
    out.write(f"\nthe first round as a dry run (apportion-ray run --dry-run):\n{dry.getvalue()}")
    controller = RayController(_integration(cluster, queue), RoundPlanner(), settings)
    failures = 0
    for _ in range(args.rounds):
        started = time.monotonic()
        outcome = controller.step()
        failures += outcome.error is not None
        _report(outcome, _held(queue, outcome), out)
        time.sleep(max(0.0, args.round_seconds - (time.monotonic() - started)))
    controller.step()  # count the last round's time
    write_ledger(controller.ledger.received if controller.ledger else {}, out)
    return 1 if failures else 0


def _integration(cluster: LocalRay, queue: JobQueue, settle: bool = True) -> RayIntegration:
    return RayIntegration(RayCluster(cluster.address, grace=5.0), queue, TABLE, settle=settle)


def _dry(settings: Settings) -> Settings:
    return Settings(**{**settings.__dict__, "dry_run": True})


def _held(
    queue: JobQueue, outcome: RoundReport[QueuedJob], seconds: float = 10.0
) -> dict[str, str]:
    """What Ray holds for each job once no group of the queue is pending (at most `seconds`)."""
    ray, scope = RayCluster(), Scope(queue.queue)
    deadline = time.monotonic() + seconds
    while True:
        ours = {job: g for g in ray.groups() if (job := scope.owns(g.name)) is not None}
        if all(g.state == "CREATED" for g in ours.values()) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    return {
        job: f"placement group {g.state.lower()} on {g.gpu_type} ({nodes_text(g.placement)})"
        for job, g in ours.items()
    }


def _report(outcome: RoundReport[QueuedJob], held: dict[str, str], out: TextIO) -> None:
    out.write(f"\nround {outcome.number}")
    if outcome.error is not None:
        out.write(f": changed nothing: {outcome.error}\n")
        return
    status = outcome.decision.status if outcome.decision else "-"
    out.write(f" ({status} allocation; {len(outcome.failed)} command(s) refused)\n")
    for action in outcome.actions:
        out.write(f"  job {action.job:<3} {action.kind:<7} {action.reason}\n")
        out.write(f"  {'':<3}     Ray now: {held.get(action.job, 'no placement group')}\n")


if __name__ == "__main__":
    raise SystemExit(main())
