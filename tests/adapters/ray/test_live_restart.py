"""The adapter killed or replaced mid-run, on the live Ray cluster: the queue (SQLite) and
Ray's placement groups are all a new adapter needs. No job is lost (each stays queued or
running), none is started twice (its entrypoint never runs twice at once, and a job Ray holds
a group for is never started again), and the new adapter's rounds are enacted exactly."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from apportion.adapters.framework import Kind
from apportion.adapters.ray.local.cluster import LocalRay
from apportion.adapters.ray.queue import ACTIVE, JobQueue
from apportion.adapters.ray.raycluster import RayCluster, group_name
from tests.adapters.ray.driving import (
    TABLE,
    clear,
    controller,
    groups,
    held,
    lines,
    never_twice,
    planned,
    settled,
    starts,
    submit,
)

ROOT = Path(__file__).resolve().parents[3]
MIX = [(8, "resnet50"), (8, "lm"), (4, "gan"), (4, "gan"), (2, "lm"), (8, "resnet50"), (8, "lm")]


@pytest.fixture
def queue(ray_cluster: LocalRay, tmp_path: Path) -> Iterator[JobQueue]:
    queue = JobQueue(tmp_path / "queue.sqlite")
    yield queue
    clear(queue)


def _no_job_lost(queue: JobQueue, ids: list[str], marks: Path) -> None:
    # Entrypoints start a moment after their group (the actor's worker starts first).
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        now = held(queue)
        if all((never_twice(marks, j) == 1) == (j in now) for j in ids):
            break
        time.sleep(0.2)
    for job in ids:
        row = queue.get(job)
        assert row.state in ACTIVE, (job, row.state)
        # Its entrypoint runs exactly when Ray holds its group.
        assert (never_twice(marks, job) == 1) == (job in now), (job, now.get(job))


def test_a_new_adapter_on_the_same_queue_carries_on(
    ray_cluster: LocalRay, queue: JobQueue, tmp_path: Path
) -> None:
    marks, state = tmp_path / "marks", tmp_path / "state.json"
    ids = submit(queue, MIX, marks)
    first = controller(ray_cluster, queue, state)
    for _ in range(2):
        assert first.step().error is None
        settled()
        time.sleep(1.0)
    before = held(queue)
    # A new adapter (as after a crash: the old one is simply dropped).
    second = controller(ray_cluster, JobQueue(queue.path), state)
    for number in range(2):
        outcome = second.step()
        assert outcome.error is None and not outcome.failed
        settled()
        assert held(queue) == planned(outcome)
        if number == 0:  # what ran before the restart is kept, moved or preempted: not started
            started = {a.job for a in outcome.actions if a.kind == Kind.START}
            assert not started & set(before), (started, before)
        time.sleep(1.0)
    time.sleep(1.0)
    _no_job_lost(queue, ids, marks)
    assert second.ledger is not None and set(before) <= set(second.ledger.received)


def test_a_job_started_but_not_recorded_is_not_started_again(
    ray_cluster: LocalRay, queue: JobQueue, tmp_path: Path
) -> None:
    marks = tmp_path / "marks"
    ids = submit(queue, [(8, "resnet50"), (4, "lm")], marks)
    # The adapter died between Ray's start and the queue's record: the row still says queued.
    row = queue.get(ids[0])
    env = {"APPORTION_JOB_ID": row.id, "APPORTION_START": "1", "APPORTION_GPU_TYPE": "v100"}
    ray = RayCluster(ray_cluster.address)
    ray.start(group_name(queue.queue, row.id, 1), "v100", {"n1": 8}, (row.entrypoint, None, env))
    assert queue.get(row.id).state == "queued"
    settled()
    ctl = controller(ray_cluster, queue, tmp_path / "state.json", allow_preemption=False)
    outcome = ctl.step()
    assert outcome.error is None
    kinds = {a.job: a.kind for a in outcome.actions}
    assert kinds[row.id] == Kind.FIXED  # seen running where Ray holds it
    settled()
    assert held(queue)[row.id] == ("v100", {"n1": 8})
    # The queue now records the start Ray holds: a later start of the job is its second.
    adopted = queue.get(row.id)
    assert (adopted.state, adopted.starts, adopted.gpu_type) == ("running", 1, "v100")
    _no_job_lost(queue, ids, marks)
    assert len(starts(marks, row.id)) == 1


def _adapter(ray_cluster: LocalRay, queue: JobQueue, tmp_path: Path, rounds: int) -> list[str]:
    table = tmp_path / "table.json"
    table.write_text(json.dumps(TABLE))
    return [
        sys.executable,
        "-m",
        "apportion.adapters.ray",
        "run",
        f"--queue-file={queue.path}",
        f"--throughputs={table}",
        f"--address={ray_cluster.address}",
        f"--state={tmp_path / 'state.json'}",
        "--allow-preemption",
        "--round-rule=gavel",
        "--round-seconds=1.5",
        "--grace-seconds=5",
        f"--rounds={rounds}",
    ]


def test_an_adapter_killed_mid_run_loses_nothing_and_starts_nothing_twice(
    ray_cluster: LocalRay, queue: JobQueue, tmp_path: Path
) -> None:
    marks = tmp_path / "marks"
    ids = submit(queue, MIX, marks)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = _adapter(ray_cluster, queue, tmp_path, rounds=50)
    process = subprocess.Popen(command, env=env, cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 90
        # Killed once it has started jobs in several rounds (some preempted and restarted).
        while sum(queue.get(j).starts for j in ids) < len(ids) + 2:
            assert process.poll() is None and time.monotonic() < deadline, "no rounds"
            time.sleep(0.1)
        process.send_signal(signal.SIGKILL)
    finally:
        process.kill()
        process.wait()
    again = subprocess.run(
        _adapter(ray_cluster, queue, tmp_path, rounds=2),
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert again.returncode == 0, again.stderr[-3000:]
    settled()
    time.sleep(1.5)
    _no_job_lost(queue, ids, marks)
    log = [json.loads(line) for line in again.stderr.splitlines() if line.startswith("{")]
    assert [e["round"] for e in log if e.get("event") == "round"] == [1, 2]


def test_of_two_groups_of_one_job_the_older_is_stopped(
    ray_cluster: LocalRay, queue: JobQueue, tmp_path: Path
) -> None:
    marks = tmp_path / "marks"
    (job,) = submit(queue, [(4, "lm")], marks)
    row = queue.get(job)
    ray = RayCluster(ray_cluster.address)
    for start, node in ((1, "n1"), (2, "n2")):  # as if a stop had failed to remove the first
        env = {"APPORTION_JOB_ID": job, "APPORTION_START": str(start), "APPORTION_GPU_TYPE": "v100"}
        ray.start(
            group_name(queue.queue, job, start), "v100", {node: 4}, (row.entrypoint, None, env)
        )
    settled()
    deadline = time.monotonic() + 20
    while len(starts(marks, job)) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    first_pid = next(line.split()[3] for line in starts(marks, job) if line.split()[1] == "1")
    ctl = controller(ray_cluster, queue, tmp_path / "state.json", allow_preemption=False)
    outcome = ctl.step()
    assert outcome.error is None
    assert {a.job: a.kind for a in outcome.actions} == {job: Kind.FIXED}
    settled()
    assert held(queue) == {job: ("v100", {"n2": 4})}
    assert [name for name in groups() if name.startswith("apportion-")] == [
        group_name(queue.queue, job, 2)
    ]
    assert f"stop {first_pid}" in lines(marks, job)  # it had its checkpoint signal
