"""Rounds enacted on the live Ray cluster, read back from Ray (`placement_group_table()`): the
placement groups Ray holds after each round are exactly the round's plan (type, nodes, GPUs),
no node gives more GPUs than it has, preempted jobs lose their group and come back, and each
start is one run of the entrypoint."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from apportion.adapters.framework import Kind
from apportion.adapters.ray.local.cluster import LocalRay
from apportion.adapters.ray.queue import JobQueue
from tests.adapters.ray.driving import (
    clear,
    controller,
    held,
    planned,
    settled,
    starts,
    submit,
)

# 42 GPUs asked for on 24 (n1, n2: 8 V100; n3: 8 K80): gangs of 2 to 8.
MIX = [(8, "resnet50"), (8, "lm"), (4, "gan"), (4, "gan"), (2, "lm"), (8, "resnet50"), (8, "lm")]


@pytest.fixture
def queue(ray_cluster: LocalRay, tmp_path: Path) -> Iterator[JobQueue]:
    queue = JobQueue(tmp_path / "queue.sqlite")
    yield queue
    clear(queue)


def test_each_round_ray_holds_exactly_the_rounds_plan(
    ray_cluster: LocalRay, queue: JobQueue, tmp_path: Path
) -> None:
    marks = tmp_path / "marks"
    ids = submit(queue, MIX, marks)
    ctl = controller(ray_cluster, queue, tmp_path / "state.json")
    begun = {j: 0 for j in ids}
    preempted, resumed = set(), set()
    for _ in range(3):
        outcome = ctl.step()
        assert outcome.error is None and not outcome.failed, (outcome.error, outcome.failed)
        now = settled()
        assert all(g["state"] == "CREATED" for g in now.values()), now
        assert held(queue) == planned(outcome)  # nothing more, nothing less, nowhere else
        used: dict[str, int] = {}
        for _, placement in held(queue).values():
            for node, gpus in placement.items():
                used[node] = used.get(node, 0) + gpus
        assert all(used[n] <= ray_cluster.nodes[n][1] for n in used), used
        for action in outcome.actions:
            begun[action.job] += action.kind in (Kind.START, Kind.MOVE)
            if action.kind == Kind.PREEMPT:
                preempted.add(action.job)
            elif action.kind == Kind.START and action.job in preempted:
                resumed.add(action.job)
        # On a busy host a worker process takes seconds to start: each round's entrypoints
        # run before the next round (a job stopped before its entrypoint ran marks nothing).
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(len(starts(marks, j)) < begun[j] for j in ids):
            time.sleep(0.2)
        time.sleep(2.0)
    assert preempted and resumed, "the rounds did not exercise preemption and restart"
    deadline = time.monotonic() + 20  # the last round's actors start their entrypoints
    while time.monotonic() < deadline and any(len(starts(marks, j)) < begun[j] for j in ids):
        time.sleep(0.2)
    for job in ids:
        marked = starts(marks, job)
        assert len(marked) == begun[job], (job, marked, begun[job])
        assert [line.split()[1] for line in marked] == [str(n + 1) for n in range(begun[job])]
        assert queue.get(job).starts == begun[job]
    ctl.step()
    assert ctl.ledger is not None
    assert set(ctl.ledger.received) == {j for j in ids if begun[j]}
