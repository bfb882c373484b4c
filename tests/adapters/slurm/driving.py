"""Driving the controller against the live cluster in tests, and reading back Slurm's own view
of what happened (`squeue --json`): where each job runs, which GPUs are in use, and a
fingerprint of everything a round could have changed."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

from apportion.adapters.framework import (
    Controller,
    Kind,
    RoundPlanner,
    RoundReport,
    Settings,
)
from apportion.adapters.slurm.integration import SlurmIntegration, SlurmState
from apportion.adapters.slurm.local.cluster import GPUS_PER_NODE, NODES, Cluster
from apportion.adapters.slurm.scope import Scope
from apportion.adapters.slurm.slurmcli import Slurm, SlurmJob, parse_jobs

TABLE = {
    "resnet50": {"v100": 4.0, "k80": 1.0},
    "lm": {"v100": 2.0, "k80": 1.0},
    "gan": {"v100": 3.0, "k80": 2.0},
}
RUNS = (Kind.START, Kind.MOVE, Kind.KEEP)
#: Seconds Slurm may take to start what a round released (about 1 s measured, 3 s at worst).
START_SECONDS = 6.0


def controller(
    cluster: Cluster,
    state: Path,
    planner: RoundPlanner | None = None,
    scope: Scope | None = None,
    **settings: Any,
) -> Controller[SlurmState, SlurmJob]:
    """A controller on the test cluster (its SLURM_CONF), solving in process by default."""
    options = {"allow_preemption": True, "round_seconds": 3.0, "requeue_wait": 2.0, **settings}
    integration = SlurmIntegration(Slurm(cluster.env), TABLE, scope)
    return Controller(integration, planner or RoundPlanner(), Settings(state, **options))


def submit(cluster: Cluster, specs: list[tuple[str, str]], seconds: int = 300) -> list[str]:
    """Held `sleep` jobs, one per (sbatch options, model) pair; their ids."""
    return [
        cluster.sbatch("--hold", *options.split(), f"--comment=model={model}", seconds=seconds)
        for options, model in specs
    ]


def jobs(cluster: Cluster) -> dict[str, SlurmJob]:
    """Slurm's view of every job."""
    return {j.id: j for j in parse_jobs(json.loads(cluster.run("squeue", "--json").stdout))}


def settle(
    cluster: Cluster, outcome: RoundReport[SlurmJob], seconds: float = START_SECONDS
) -> dict[str, SlurmJob]:
    """Slurm's view once every job the round runs is running where planned and every job it
    preempts has stopped (or after `seconds`, for the assertions to report what is not)."""
    deadline = time.monotonic() + seconds
    while True:
        now = jobs(cluster)
        if all(
            _as_planned(now[a.job], a.kind, a.gpu_type, a.placement)
            for a in outcome.actions
            if a.job in now
        ):
            return now
        if time.monotonic() > deadline:
            return now
        time.sleep(0.2)


def running_soon(
    cluster: Cluster, ids: list[str], seconds: float = START_SECONDS
) -> dict[str, SlurmJob]:
    """Slurm's view once every job of `ids` runs (or after `seconds`, for the assertions to
    report which does not)."""
    deadline = time.monotonic() + seconds
    while True:
        now = jobs(cluster)
        if all(now[j].running for j in ids) or time.monotonic() > deadline:
            return now
        time.sleep(0.2)


def _as_planned(job: SlurmJob, kind: Kind, gpu_type: str | None, placement: dict[str, int]) -> bool:
    if job.state == "COMPLETED":  # ran to its end by itself
        return True
    if kind in RUNS:
        return job.running and job.running_type == gpu_type and job.placement == placement
    if kind == Kind.PREEMPT:
        return job.pending
    return True


def assert_enacted(outcome: RoundReport[SlurmJob], now: dict[str, SlurmJob]) -> None:
    """Every job the round runs runs on the planned type and nodes; every job it preempts is
    back in the queue, held; every job it holds back is held."""
    assert outcome.error is None, outcome.error
    assert not outcome.failed, outcome.failed
    for action in outcome.actions:
        job = now[action.job]
        seen = (job.state, job.reason, job.running_type, job.placement)
        if job.state == "COMPLETED":  # a short job that ran to its end by itself
            assert action.kind in RUNS and job.start_time > 0, (action, seen)
        elif action.kind in RUNS:
            assert job.running, (action, seen)
            assert (job.running_type, job.placement) == (action.gpu_type, action.placement), (
                action,
                seen,
            )
        elif action.kind in (Kind.PREEMPT, Kind.HOLD, Kind.WAIT):
            assert job.held, (action, seen)


_INDEXES = re.compile(r"IDX:([\d,-]+)")


def gpus_in_use(cluster: Cluster) -> dict[str, list[int]]:
    """Node → the GPU indexes held by jobs, one entry per job and GPU (read from squeue's
    `gres_detail`, so a GPU two jobs hold appears twice)."""
    document = json.loads(cluster.run("squeue", "--json").stdout)
    used: dict[str, list[int]] = {n: [] for n in NODES}
    for entry in document["jobs"]:
        if entry["job_state"] not in ("RUNNING", "COMPLETING", "CONFIGURING"):
            continue
        names = [
            n["nodename"] for n in (entry.get("job_resources") or {}).get("allocated_nodes") or []
        ]
        for name, detail in zip(names, entry.get("gres_detail") or [], strict=False):
            match = _INDEXES.search(detail)
            for part in match.group(1).split(",") if match else []:
                first, _, last = part.partition("-")
                used[name] += list(range(int(first), int(last or first) + 1))
    return used


def assert_no_gpu_oversubscribed(cluster: Cluster) -> None:
    for node, indexes in gpus_in_use(cluster).items():
        assert len(indexes) == len(set(indexes)), f"{node}: a GPU held twice {sorted(indexes)}"
        assert all(0 <= i < GPUS_PER_NODE for i in indexes), (node, indexes)


def fingerprint(cluster: Cluster) -> dict[str, tuple[Any, ...]]:
    """Everything about each job a round could change."""
    document = json.loads(cluster.run("squeue", "--json").stdout)
    return {
        str(e["job_id"]): (
            e["job_state"],
            e["state_reason"],
            e["features"],
            e["priority"],
            e["required_nodes"],
            e["nodes"],
            e["restart_cnt"],
        )
        for e in document["jobs"]
    }
