"""The controller with the policy and the round computed by a real apportion service (started
in a subprocess): rounds are enacted as planned, and once the service is gone the adapter
changes nothing in Slurm, and says so."""

from __future__ import annotations

import time
from pathlib import Path

from apportion.adapters.framework import RoundPlanner
from apportion.adapters.slurm.local.cluster import Cluster, free_ports
from tests.adapters.slurm.driving import assert_enacted, controller, fingerprint, settle, submit
from tests.api.service import running_service, stop


def test_rounds_over_http_and_nothing_changes_when_the_service_is_gone(
    cluster: Cluster, tmp_path: Path
) -> None:
    submit(
        cluster, [("--gres=gpu:8", "resnet50"), ("--gres=gpu:4", "lm"), ("--gres=gpu:k80:2", "gan")]
    )
    with running_service(workers="1") as service:
        planner = RoundPlanner.remote(service.base, timeout=30)
        ctl = controller(cluster, tmp_path / "state.json", planner=planner)
        outcome = ctl.step()
        assert outcome.decision is not None and outcome.decision.status == "optimal"
        assert_enacted(outcome, settle(cluster, outcome))
        stop(service.process)
        submit(cluster, [("--gres=gpu:8", "lm"), ("--gres=gpu:8", "gan")] * 2)
        before = fingerprint(cluster)
        unreachable = ctl.step()
        planner.close()
    assert unreachable.error is not None
    assert unreachable.error.startswith(f"apportion at {service.base}: no answer")
    assert unreachable.actions == ()
    time.sleep(1.0)
    assert fingerprint(cluster) == before


def test_a_service_that_never_answered_changes_nothing(cluster: Cluster, tmp_path: Path) -> None:
    submit(cluster, [("--gres=gpu:2", "lm"), ("--gres=gpu:1", "gan")])
    before = fingerprint(cluster)
    (port,) = free_ports(1)  # nothing listens there
    planner = RoundPlanner.remote(f"http://127.0.0.1:{port}", timeout=5)
    outcome = controller(cluster, tmp_path / "state.json", planner=planner).step()
    planner.close()
    assert outcome.error is not None and "no answer" in outcome.error
    time.sleep(1.0)
    assert fingerprint(cluster) == before
