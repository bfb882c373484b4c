"""A round of apportion-ray on a live local Ray cluster at scale: 200 queued jobs on 512 fake
GPUs (four raylets of 128 GPUs: two V100, two K80), three rounds under Gavel's rule. Per round,
seconds spent: reading Ray and the queue (settling what happened since the last round),
solving and planning, sending the commands off, waiting for Ray to answer them all (stops and
groups, then the jobs' actors once their groups exist, and the queue's one transaction); the
round's step in all; and from its beginning until Ray's placement-group table, read back, holds
exactly the round's plan (every group created).

    python -m bench.ray_round [--jobs 200] [--rounds 3]

The jobs' actors start their entrypoints (`sleep`) after their groups exist; on two cores a
worker process takes about a second to start, so the figure is the GPUs reserved as planned
and every actor created, not the entrypoints running.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from apportion.adapters.framework import Kind, RoundPlanner, Settings
from apportion.adapters.framework.cli import configure_logging
from apportion.adapters.framework.integration import Command
from apportion.adapters.ray.controller import RayController
from apportion.adapters.ray.integration import RayIntegration
from apportion.adapters.ray.local.cluster import running
from apportion.adapters.ray.managed import RayState
from apportion.adapters.ray.queue import JobQueue
from apportion.adapters.ray.raycluster import RayCluster
from apportion.adapters.ray.scope import Scope

NODES = {"n1": "v100", "n2": "v100", "n3": "k80", "n4": "k80"}
TABLE = {
    "resnet50": {"v100": 4.0, "k80": 1.0},
    "lm": {"v100": 2.0, "k80": 1.0},
    "gan": {"v100": 3.0, "k80": 2.0},
}
RUNS = (Kind.START, Kind.MOVE, Kind.KEEP)


class Timed(RayIntegration):
    """The integration, with the seconds of its reads, sends and waits summed per round."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.seconds: defaultdict[str, float] = defaultdict(float)

    def read(self) -> RayState:
        began = time.monotonic()
        try:
            return super().read()
        finally:
            self.seconds["read"] += time.monotonic() - began

    def enact(self, command: Command) -> None:
        began = time.monotonic()
        try:
            super().enact(command)
        finally:
            self.seconds["send"] += time.monotonic() - began

    def finish(self) -> tuple[str, ...]:
        began = time.monotonic()
        try:
            return super().finish()
        finally:
            self.seconds["wait"] += time.monotonic() - began


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.ray_round")
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    configure_logging("error")
    rng = random.Random(1)
    root = Path(tempfile.mkdtemp(prefix="apportion-ray-bench-"))
    with running(NODES, gpus=128) as cluster:
        queue = JobQueue(root / "queue.sqlite")
        for _ in range(args.jobs):
            queue.submit(rng.choice(list(TABLE)), rng.choice([1, 2, 4, 8]), "exec sleep 3600")
        integration = Timed(RayCluster(cluster.address, grace=5.0), queue, TABLE)
        settings = Settings(root / "state.json", round_seconds=60.0, allow_preemption=True)
        ctl = RayController(integration, RoundPlanner(), settings)
        ray, scope = RayCluster(cluster.address), Scope(queue.queue)
        print("round  read  plan  send  wait  step  enacted  actions")
        for _ in range(args.rounds):
            integration.seconds.clear()
            began = time.monotonic()
            outcome = ctl.step()
            stepped = time.monotonic() - began
            plan = {a.job: (a.gpu_type, a.placement) for a in outcome.actions if a.kind in RUNS}
            while True:
                groups = [g for g in ray.groups() if scope.owns(g.name) is not None]
                held = {scope.owns(g.name): (g.gpu_type, g.placement) for g in groups}
                if held == plan and all(g.state == "CREATED" for g in groups):
                    break
                time.sleep(0.05)
            enacted = time.monotonic() - began
            took = integration.seconds
            planning = stepped - took["read"] - took["send"] - took["wait"]
            kinds = {str(k): len(outcome.planned(k)) for k in Kind if outcome.planned(k)}
            print(
                f"{outcome.number:>5} {took['read']:5.2f} {planning:5.2f} {took['send']:5.2f} "
                f"{took['wait']:5.2f} {stepped:5.2f} {enacted:8.2f}  {kinds}, "
                f"{len(outcome.failed)} refused"
            )
            time.sleep(2.0)


if __name__ == "__main__":
    main()
