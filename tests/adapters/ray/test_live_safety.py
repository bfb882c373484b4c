"""Scope and failing safe on the live Ray cluster, read back from Ray and the queue: a dry run
prints the commands the round then runs, a reason per job, and changes nothing; groups that are
not the queue's are never touched and their GPUs never handed out; a job whose entrypoint ends
is recorded and its GPUs freed; a cancelled job is stopped; a failed solve changes nothing."""

from __future__ import annotations

import io
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from apportion.adapters.framework import Kind
from apportion.adapters.ray.local.cluster import LocalRay
from apportion.adapters.ray.queue import JobQueue
from apportion.adapters.ray.raycluster import bundles
from tests.adapters.ray.driving import (
    clear,
    controller,
    groups,
    held,
    lines,
    planned,
    settled,
    submit,
)


@pytest.fixture
def queue(ray_cluster: LocalRay, tmp_path: Path) -> Iterator[JobQueue]:
    queue = JobQueue(tmp_path / "queue.sqlite")
    yield queue
    clear(queue)


def _rows(queue: JobQueue) -> list[tuple[object, ...]]:
    return [(j.id, j.state, j.starts, j.started) for j in queue.jobs()]


def test_a_dry_run_prints_the_commands_the_round_then_runs(
    ray_cluster: LocalRay, queue: JobQueue, tmp_path: Path
) -> None:
    ids = submit(queue, [(8, "resnet50"), (4, "lm"), (2, "gan"), (8, "lm")], tmp_path / "m")
    queue.submit("bert", 2, "true")  # no row in the table
    state = tmp_path / "state.json"
    printed = io.StringIO()
    dry = controller(ray_cluster, queue, state, dry_run=True)
    dry.integration.settle = False  # type: ignore[attr-defined]
    dry.out = printed
    assert dry.step().error is None
    time.sleep(1.0)
    assert groups() == {} and not state.exists()
    assert all(row[1:] == ("queued", 0, None) for row in _rows(queue))
    out = printed.getvalue().splitlines()
    assert out[0] == "# round 1 (dry run: nothing is changed)"
    assert sum(line.startswith("# job ") for line in out) == len(ids) + 1  # a reason per job
    assert any("skip: left alone: no throughput row for 'bert'" in line for line in out)
    commands = [line for line in out if not line.startswith("#")]
    real = controller(ray_cluster, queue, state).step()
    assert commands == [" ".join(c) for a in real.actions for c in (*a.commands, *a.then)]
    settled()
    assert held(queue) == planned(real)


def test_groups_that_are_not_the_queues_are_left_alone(
    ray_cluster: LocalRay, queue: JobQueue, tmp_path: Path
) -> None:
    from ray.util.placement_group import placement_group, remove_placement_group

    foreign = placement_group(bundles("v100", {"n1": 6}), name="someone-else")
    foreign.wait(20)
    other = JobQueue(queue.path, "other")
    their = other.submit("lm", 8, "sleep 600")
    theirs = controller(ray_cluster, other, tmp_path / "theirs.json", allow_preemption=False)
    try:
        assert theirs.step().error is None
        mine = submit(queue, [(8, "resnet50")] * 4, tmp_path / "m")
        ctl = controller(ray_cluster, queue, tmp_path / "state.json")
        before = {n: g for n, g in settled().items() if not n.startswith("apportion-default-")}
        for _ in range(2):
            outcome = ctl.step()
            assert outcome.error is None and not outcome.failed
            now = settled()
            assert held(queue) == planned(outcome)
            assert {n: g for n, g in now.items() if n in before} == before  # untouched
            # n1 has 2 GPUs left beside the foreign group; the other queue's job holds 8 more.
            assert outcome.view is not None
            free = sum(gpus for _, gpus in outcome.view.nodes.values())
            assert free == 3 * 8 - 6 - 8
            assert set(outcome.view.jobs) == set(mine)
    finally:
        remove_placement_group(foreign)
        clear(other)
    assert other.get(their.id).starts == 1


def test_an_ended_job_is_recorded_and_a_cancelled_one_stopped(
    ray_cluster: LocalRay, queue: JobQueue, tmp_path: Path
) -> None:
    short = queue.submit("lm", 2, "sleep 1; exit 3")
    long = submit(queue, [(4, "gan")], tmp_path / "m")[0]
    ctl = controller(ray_cluster, queue, tmp_path / "state.json")
    first = ctl.step()
    assert {a.job: a.kind for a in first.actions} == {short.id: Kind.START, long: Kind.START}
    settled()
    queue.cancel(long)
    # Rounds until the short job's entrypoint has ended: how long that takes is the machine's.
    deadline = time.monotonic() + 180
    while queue.get(short.id).state != "failed" and time.monotonic() < deadline:
        later = ctl.step()
        # Until it has ended the short job keeps its GPUs; the cancelled one is only removed.
        assert later.error is None and {a.kind for a in later.actions} <= {Kind.KEEP}
        time.sleep(0.5)
    assert later.actions == ()  # the round that saw it end had nothing left to run
    assert queue.get(short.id).state == "failed" and queue.get(short.id).exit_code == 3
    assert queue.get(long).state == "cancelled"
    assert held(queue) == {}
    assert lines(tmp_path / "m", long)[-1].startswith("stop ")  # it had its SIGTERM


def test_a_failed_solve_changes_nothing(
    ray_cluster: LocalRay, queue: JobQueue, tmp_path: Path
) -> None:
    submit(queue, [(8, "lm")] * 4, tmp_path / "m")
    first = controller(ray_cluster, queue, tmp_path / "state.json").step()
    settled()
    before, rows = held(queue), _rows(queue)
    assert before == planned(first)
    # makespan needs each job's steps_remaining, which the adapter does not have.
    failing = controller(ray_cluster, queue, tmp_path / "state.json", policy="makespan")
    outcome = failing.step()
    assert outcome.error is not None and "steps_remaining" in outcome.error
    assert outcome.actions == ()
    time.sleep(1.0)
    assert held(queue) == before and _rows(queue) == rows


def _processes_of(group: str) -> list[int]:
    """Processes whose environment names `group` (a job's entrypoint and all it started)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                environ = (entry / "environ").read_bytes().split(b"\0")
            except OSError:
                continue
            if f"APPORTION_PLACEMENT_GROUP={group}".encode() in environ:
                found.append(int(entry.name))
    return found


def test_a_group_removed_behind_the_adapters_back_leaves_no_process(
    ray_cluster: LocalRay, queue: JobQueue, tmp_path: Path
) -> None:
    from ray import PlacementGroupID
    from ray.util.placement_group import PlacementGroup, remove_placement_group

    (job,) = submit(queue, [(2, "lm")], tmp_path / "m")
    ctl = controller(ray_cluster, queue, tmp_path / "state.json")
    assert ctl.step().error is None
    settled()
    group = f"apportion-{queue.queue}-{job}.1"
    deadline = time.monotonic() + 20
    while len(_processes_of(group)) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(_processes_of(group)) >= 2  # its shell and its `sleep`
    from ray.util.placement_group import placement_group_table

    table = placement_group_table().items()
    (group_id,) = [k for k, e in table if e["name"] == group and e["state"] != "REMOVED"]
    remove_placement_group(PlacementGroup(PlacementGroupID.from_hex(group_id)))
    deadline = time.monotonic() + 30  # the raylet reaps orphans every ten seconds
    while _processes_of(group) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _processes_of(group) == []
    outcome = ctl.step()  # the adapter finds the job without its group: queued again
    assert queue.get(job).starts >= 1 and outcome.error is None


def test_a_start_ray_refuses_is_the_rounds_failure_and_the_job_stays_queued(
    ray_cluster: LocalRay, queue: JobQueue, tmp_path: Path
) -> None:
    import ray

    from apportion.adapters.ray.raycluster import NAMESPACE, group_name

    refused, other = submit(queue, [(8, "resnet50"), (4, "lm")], tmp_path / "m")

    @ray.remote(num_cpus=0)
    class Squatter:
        def ping(self) -> int:
            return 1

    # Someone holds the actor name the job's first start would take: Ray refuses its actor.
    name = group_name(queue.queue, refused, 1)
    squatter = Squatter.options(  # type: ignore[attr-defined]
        name=name, namespace=NAMESPACE, lifetime="detached"
    ).remote()
    try:
        assert ray.get(squatter.ping.remote(), timeout=60) == 1
        outcome = controller(ray_cluster, queue, tmp_path / "state.json").step()
        assert outcome.error is None
        assert {a.job: a.kind for a in outcome.actions} == {refused: Kind.START, other: Kind.START}
        assert [c.split()[:2] for c in outcome.failed] == [["start", refused]]
        settled()
        assert set(held(queue)) == {other}  # its group was removed with the refusal
        assert (queue.get(refused).state, queue.get(refused).starts) == ("queued", 0)
        assert (queue.get(other).state, queue.get(other).starts) == ("running", 1)
        assert ray.get(squatter.ping.remote(), timeout=60) == 1  # not the adapter's: untouched
    finally:
        ray.kill(squatter)
