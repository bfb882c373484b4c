"""The controller with the policy computed by a real apportion service (started in a
subprocess): Ray then holds exactly the round's plan, and once the service is gone the adapter
changes nothing in Ray or in its queue, and says so."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from apportion.adapters.framework import RoundPlanner
from apportion.adapters.ray.local.cluster import LocalRay
from apportion.adapters.ray.queue import JobQueue
from tests.adapters.ray.driving import clear, controller, held, planned, settled, submit
from tests.api.service import running_service, stop


@pytest.fixture
def queue(ray_cluster: LocalRay, tmp_path: Path) -> Iterator[JobQueue]:
    queue = JobQueue(tmp_path / "queue.sqlite")
    yield queue
    clear(queue)


def test_rounds_over_http_and_nothing_changes_when_the_service_is_gone(
    ray_cluster: LocalRay, queue: JobQueue, tmp_path: Path
) -> None:
    submit(queue, [(8, "resnet50"), (4, "lm"), (2, "gan")], tmp_path / "m")
    with running_service(workers="1") as service:
        planner = RoundPlanner.remote(service.base, timeout=30)
        ctl = controller(ray_cluster, queue, tmp_path / "state.json", planner=planner)
        outcome = ctl.step()
        assert outcome.decision is not None and outcome.decision.status == "optimal"
        settled()
        assert held(queue) == planned(outcome) and len(planned(outcome)) == 3
        stop(service.process)
        submit(queue, [(8, "lm"), (8, "gan")] * 2, tmp_path / "m")
        before = (held(queue), [(j.id, j.state, j.starts) for j in queue.jobs()])
        unreachable = ctl.step()
        planner.close()
    assert unreachable.error is not None
    assert unreachable.error.startswith(f"apportion at {service.base}: no answer")
    assert unreachable.actions == ()
    time.sleep(1.0)
    assert (held(queue), [(j.id, j.state, j.starts) for j in queue.jobs()]) == before
