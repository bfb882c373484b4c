"""Stopping the local cluster ends what it started (its daemons, its jobs' processes) and
nothing else: a command of the user's run with its SLURM_CONF, or naming its directory, lives
on. A cluster of its own (the session's is shared by the other tests)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from apportion.adapters.slurm.local.cluster import Unavailable, start, stop
from tests.adapters.slurm.driving import running_soon


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


def _descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    stat = (entry / "stat").read_text().rpartition(")")[2].split()
                except OSError:
                    continue
                if int(stat[1]) == parent:
                    found.append(int(entry.name))
                    todo.append(int(entry.name))
    return found


def test_stopping_the_cluster_ends_its_own_processes_only() -> None:
    root = Path(tempfile.mkdtemp(prefix="apportion-slurm-stop-"))
    try:
        cluster = start(root, hold_partitions=("gpu",))
    except Unavailable as exc:
        shutil.rmtree(root, ignore_errors=True)
        pytest.skip(f"no live Slurm cluster: {exc}")
    users: list[subprocess.Popen[bytes]] = []
    try:
        job = cluster.sbatch("--gres=gpu:2", seconds=300)
        cluster.run("scontrol", "release", job)
        assert running_soon(cluster, [job])[job].running
        steps, payload = _job_processes(str(cluster.conf))
        assert steps and payload  # slurmstepd, the batch script, its sleep
        # The user's own commands: one with the cluster's SLURM_CONF, one naming its directory.
        users.append(subprocess.Popen(["sleep", "300"], env=cluster.env))
        users.append(subprocess.Popen(["sh", "-c", f"sleep 300; : {root}"], cwd=root))
        daemons = [p.pid for p in cluster.processes]
    finally:
        stop(cluster)
        shutil.rmtree(root, ignore_errors=True)
    try:
        time.sleep(0.5)
        assert [p for p in daemons if _alive(p)] == []
        assert [p for p in steps + payload if _alive(p)] == []
        assert all(u.poll() is None for u in users)  # the user's commands run on
    finally:
        for user in users:
            user.kill()
            user.wait()


def _job_processes(conf: str) -> tuple[list[int], list[int]]:
    """The job's slurmstepd and its descendants, once its payload (the `sleep`) runs: squeue
    says RUNNING a moment before slurmstepd has forked it."""
    deadline = time.monotonic() + 15
    while True:
        steps = [
            int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and _stepd_of(p, conf)
        ]
        payload = [d for s in steps for d in _descendants(s)]
        if len(payload) >= 2 or time.monotonic() > deadline:
            return steps, payload
        time.sleep(0.2)


def _stepd_of(entry: Path, conf: str) -> bool:
    try:
        if not (entry / "cmdline").read_bytes().startswith(b"slurmstepd:"):
            return False
        return f"SLURM_CONF={conf}".encode() in (entry / "environ").read_bytes().split(b"\0")
    except OSError:
        return False
