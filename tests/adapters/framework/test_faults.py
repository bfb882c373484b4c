"""The controller's guarantees under faults, on the in-memory integration: after a failed or
slow command the scheduler is read again and a plan that no longer holds is abandoned (no job
is started onto GPUs that are not free); a job running without its GPUs is requeued whatever
the round says; holds are told apart (the adapter's, its users'); one instance at a time."""

from __future__ import annotations

import dataclasses
import io
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from apportion.adapters.framework import Command, Controller, Job, Kind, Managed, RoundPlanner
from apportion.adapters.framework.controller import Settings
from apportion.adapters.framework.holds import sort_holds
from apportion.adapters.framework.ledger import Ledger
from apportion.adapters.framework.lock import InstanceLock, LockError, claim
from tests.adapters.framework.memory import MemoryCluster, MemoryIntegration, MemoryJob

THROUGHPUT = {"lm": {"v100": 2.0, "k80": 1.0}, "gan": {"v100": 3.0, "k80": 2.0}}


def _cluster(jobs: int) -> MemoryCluster:
    cluster = MemoryCluster(nodes={"v0": ("v100", 2), "k0": ("k80", 2)})
    for i in range(jobs):
        key = list(THROUGHPUT)[i % 2]
        cluster.add(f"j{i}", key, 1, THROUGHPUT[key])
    return cluster


def _controller(
    cluster: MemoryCluster, state: Path, integration: Any = None, **settings: Any
) -> Controller[MemoryCluster, MemoryJob]:
    options = {"allow_preemption": True, "round_seconds": 60.0, "rule": "deficit", **settings}
    return Controller(
        integration or MemoryIntegration(cluster),
        RoundPlanner(),
        Settings(state, **options),
        clock=lambda: cluster.clock,
        out=io.StringIO(),
    )


def _oversubscribed(cluster: MemoryCluster) -> list[str]:
    return [n for n, (_, gpus) in cluster.nodes.items() if cluster.used(n) > gpus]


def test_a_stop_that_failed_abandons_the_starts_planned_onto_its_gpus(tmp_path: Path) -> None:
    cluster = _cluster(jobs=6)  # 6 jobs on 4 GPUs: each round preempts some
    ctl = _controller(cluster, tmp_path / "state.json")
    ctl.step()
    cluster.clock += 60.0
    cluster.refuse = ("stop",)  # the scheduler refuses every stop now
    before = len(cluster.enacted)
    outcome = ctl.step()
    assert outcome.planned(Kind.PREEMPT) and outcome.planned(Kind.START)
    first_stop = " ".join(outcome.planned(Kind.PREEMPT)[0].commands[0])
    assert outcome.abandoned is not None and "could not be stopped" in outcome.abandoned
    # Nothing after the failed stop: no job was sent onto the GPUs it still holds.
    assert outcome.failed == (first_stop,) and cluster.enacted[before:] == []
    assert not _oversubscribed(cluster)


class _Slow(MemoryIntegration):
    """The first command takes longer than `slow_command`; reads are counted."""

    def __init__(self, cluster: MemoryCluster) -> None:
        super().__init__(cluster)
        self.reads: list[int] = []  # commands enacted before each read

    def read(self) -> MemoryCluster:
        self.reads.append(len(self.cluster.enacted))
        return super().read()

    def enact(self, command: Command) -> None:
        if not self.cluster.enacted:
            time.sleep(0.2)
        super().enact(command)


def test_a_slow_command_is_followed_by_a_fresh_read_and_a_plan_that_holds_goes_on(
    tmp_path: Path,
) -> None:
    cluster = _cluster(jobs=3)
    slow = _Slow(cluster)
    outcome = _controller(cluster, tmp_path / "s.json", slow, slow_command=0.1).step()
    # Read once to plan, once more right after the first (slow) command, before the same
    # job's next one, then no more.
    assert slow.reads == [0, 1]
    assert outcome.abandoned is None and not outcome.failed
    assert {a.job for a in outcome.planned(Kind.START)} == {"j0", "j1", "j2"}
    assert all(cluster.jobs[j].gpu_type is not None for j in ("j0", "j1", "j2"))


class _Faulty(MemoryIntegration):
    """Job j0 is shown running without the GPUs it asked for."""

    def managed(self, state: MemoryCluster) -> Managed[MemoryJob]:
        managed = super().managed(state)
        jobs = [
            dataclasses.replace(j, fault="it runs with 0 of the 1 GPUs it asked for")
            if j.id == "j0" and j.running
            else j
            for j in managed.jobs
        ]
        return Managed(managed.nodes, jobs, managed.skipped)


def test_a_job_running_without_its_gpus_is_requeued_and_its_node_not_reused(
    tmp_path: Path,
) -> None:
    cluster = _cluster(jobs=3)
    state = tmp_path / "s.json"
    _controller(cluster, state).step()
    node = next(iter(cluster.jobs["j0"].placement))
    cluster.clock += 60.0
    # Even with preemption not allowed: a job without its GPUs computes nothing.
    outcome = _controller(cluster, state, _Faulty(cluster), allow_preemption=False).step()
    (requeue,) = outcome.planned(Kind.REQUEUE)
    assert requeue.job == "j0" and requeue.commands == (("stop", "j0"),)
    assert cluster.jobs["j0"].gpu_type is None
    started = [a for a in outcome.actions if a.kind in (Kind.START, Kind.MOVE)]
    assert all(node not in a.placement for a in started)


def _job(job_id: str, held_by: str | None, running: bool = False) -> Job[None]:
    placement = {"v0": 1} if running else {}
    return Job(job_id, "lm", 1, {"v100": 1.0}, None, held_by=held_by, placement=placement)


def test_holds_are_told_apart_by_the_book_and_the_word() -> None:
    book = Ledger(
        0.0,
        holds={"1": "JobHeldAdmin", "2": "", "3": "JobHeldUser"},
        known=frozenset({"1", "2", "3", "4", "5", "6"}),
    )
    jobs = [
        _job("1", "JobHeldUser"),  # the adapter's admin hold, then the user's on top
        _job("2", "JobHeldUser"),  # placed by the adapter, word not seen yet: its own
        _job("3", "JobHeldUser"),  # the adapter's, as recorded
        _job("4", "JobHeldUser"),  # seen before without a hold: the user's
        _job("5", "JobHeldUser", running=True),  # held while it ran: never the adapter's
        _job("6", None),  # released: leaves the book
        _job("7", "JobHeldUser"),  # new, held at submission: the adapter's to start
    ]
    others, mine = sort_holds(jobs, dataclasses.replace(book, holds={**book.holds, "6": "x"}))
    assert sorted(others) == ["1", "4", "5"]
    assert mine == {"2": "JobHeldUser", "3": "JobHeldUser", "7": "JobHeldUser"}
    # A job the book holds that is not managed now (completing a requeue) keeps its entry.
    assert sort_holds([], book)[1] == book.holds


def test_one_instance_at_a_time_and_a_killed_one_leaves_no_lock(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    first = claim(state, "memory cluster m; every job", tmp_path)
    with pytest.raises(LockError) as refused:
        claim(tmp_path / "other.json", "memory cluster m; every job", tmp_path)
    assert "\n" not in str(refused.value)
    assert f"held by pid {os.getpid()} on host " in str(refused.value)
    assert "managing memory cluster m; every job" in str(refused.value)
    first.release()
    claim(tmp_path / "other.json", "memory cluster m; every job", tmp_path).release()
    # A holder killed with SIGKILL: the kernel drops its lock.
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; "
            "from apportion.adapters.framework.lock import claim; "
            f"claim(Path({str(state)!r}), None); print('held', flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    with pytest.raises(LockError, match=f"pid {holder.pid} on host"):
        InstanceLock([state.with_name("state.json.lock")]).acquire()
    holder.kill()
    holder.wait()
    claim(state, None).release()
