"""Driving the controller against the live Ray cluster in tests, and reading back what Ray
holds (`placement_group_table()`): where each job's placement group is, and in what state."""

from __future__ import annotations

import time
from contextlib import suppress
from pathlib import Path
from typing import Any

from apportion.adapters.framework import Kind, RoundPlanner, RoundReport, Settings
from apportion.adapters.ray.controller import RayController
from apportion.adapters.ray.integration import RayIntegration
from apportion.adapters.ray.local.cluster import LocalRay
from apportion.adapters.ray.queue import JobQueue, QueuedJob

TABLE = {
    "resnet50": {"v100": 4.0, "k80": 1.0},
    "lm": {"v100": 2.0, "k80": 1.0},
    "gan": {"v100": 3.0, "k80": 2.0},
}
RUNS = (Kind.START, Kind.MOVE, Kind.KEEP)


def controller(
    cluster: LocalRay,
    queue: JobQueue,
    state: Path,
    planner: RoundPlanner | None = None,
    **settings: Any,
) -> RayController:
    """A controller on the test cluster, solving in process by default."""
    from apportion.adapters.ray.raycluster import RayCluster

    options = {"allow_preemption": True, "round_seconds": 2.0, **settings}
    integration = RayIntegration(RayCluster(cluster.address, grace=5.0), queue, TABLE)
    return RayController(integration, planner or RoundPlanner(), Settings(state, **options))


def groups() -> dict[str, dict[str, Any]]:
    """Ray's live placement groups by name: state and placement (node → GPUs)."""
    from ray.util.placement_group import placement_group_table

    from apportion.adapters.ray.raycluster import parse_group

    live = [parse_group(e) for e in placement_group_table().values() if e["state"] != "REMOVED"]
    return {g.name: {"state": g.state, "type": g.gpu_type, "placement": g.placement} for g in live}


def held(queue: JobQueue) -> dict[str, tuple[str | None, dict[str, int]]]:
    """Job id → (type, placement) of each of the queue's jobs Ray holds a group for."""
    prefix = f"apportion-{queue.queue}-"
    return {
        name[len(prefix) :].partition(".")[0]: (g["type"], g["placement"])
        for name, g in groups().items()
        if name.startswith(prefix)
    }


def planned(outcome: RoundReport[QueuedJob]) -> dict[str, tuple[str | None, dict[str, int]]]:
    """Job id → (type, placement) of each job the round runs."""
    return {a.job: (a.gpu_type, dict(a.placement)) for a in outcome.actions if a.kind in RUNS}


def settled(seconds: float = 20.0) -> dict[str, dict[str, Any]]:
    """Ray's groups once none is pending (or after `seconds`, for the assertion to show)."""
    deadline = time.monotonic() + seconds
    while True:
        now = groups()
        if all(g["state"] == "CREATED" for g in now.values()) or time.monotonic() > deadline:
            return now
        time.sleep(0.2)


#: Notes each start and each stop (SIGTERM, the checkpoint contract) in `marks/<job>`.
ENTRYPOINT = (
    'echo "start $APPORTION_START $APPORTION_GPU_TYPE $$" >> {marks}/$APPORTION_JOB_ID; '
    "trap 'echo \"stop $$\" >> {marks}/$APPORTION_JOB_ID; exit 0' TERM; sleep 600 & wait"
)


def submit(queue: JobQueue, specs: list[tuple[int, str]], marks: Path) -> list[str]:
    """Jobs that note each start and stop in `marks/<id>` and sleep; their ids."""
    marks.mkdir(parents=True, exist_ok=True)
    entry = ENTRYPOINT.format(marks=marks)
    return [queue.submit(model, gpus, entry).id for gpus, model in specs]


def starts(marks: Path, job: str) -> list[str]:
    """The job's entrypoint's starts: `start N TYPE PID` lines."""
    return [line for line in lines(marks, job) if line.startswith("start ")]


def lines(marks: Path, job: str) -> list[str]:
    path = marks / job
    return path.read_text().splitlines() if path.exists() else []


def never_twice(marks: Path, job: str) -> int:
    """Asserts the job's entrypoint never ran twice at once (each start is stopped before the
    next); how many run now (0 or 1)."""
    running = 0
    for line in lines(marks, job):
        running += 1 if line.startswith("start ") else -1
        assert running in (0, 1), (job, lines(marks, job))
    return running


def clear(queue: JobQueue) -> None:
    """Cancel the queue's jobs, remove every group Ray holds and wait for their actors to be
    gone (between tests only)."""
    import ray
    from ray import PlacementGroupID
    from ray.util.placement_group import (
        PlacementGroup,
        placement_group_table,
        remove_placement_group,
    )

    for job in queue.jobs(("queued", "running")):
        queue.cancel(job.id)
    names = []
    for entry in placement_group_table().values():
        if entry["state"] != "REMOVED":
            group_id = PlacementGroupID.from_hex(entry["placement_group_id"])
            remove_placement_group(PlacementGroup(group_id))
            names.append(entry["name"])
    for name in names:
        with suppress(ValueError):  # gone already
            ray.kill(ray.get_actor(name, namespace="apportion"), no_restart=True)
