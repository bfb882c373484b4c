"""One planner over the client interface: the same rounds whether the policy is solved in this
process or by the real service (a subprocess), the answer reaching the mechanism as columns, and
the same one-line `PlanError` when there is no answer."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest

from apportion.adapters.framework import Controller, PlanError, RoundPlanner, Settings
from apportion.solver.result.table import JobTable
from tests.adapters.framework.memory import MemoryCluster, MemoryIntegration
from tests.api.service import Service, free_port, running_service

ROUND = 60.0
THROUGHPUT = {"a": {"v100": 4.0, "k80": 1.0}, "b": {"v100": 2.0, "k80": 1.0}}


@pytest.fixture(scope="module")
def service() -> Iterator[Service]:
    with running_service(workers="1") as running:
        yield running


def _cluster() -> MemoryCluster:
    cluster = MemoryCluster(nodes={"v0": ("v100", 2), "k0": ("k80", 2)})
    for i in range(5):
        key = "ab"[i % 2]
        cluster.add(f"j{i}", key, 1 + (i == 4), THROUGHPUT[key])
    return cluster


Enacted = list[list[tuple[str, str, str | None, dict[str, int]]]]


def _rounds(planner: RoundPlanner, state: Path, count: int = 4) -> Enacted:
    """What `count` rounds start, keep and stop, job by job, on a fresh in-memory cluster."""
    cluster = _cluster()
    settings = Settings(state, round_seconds=ROUND, rule="deficit", allow_preemption=True)
    ctl = Controller(
        MemoryIntegration(cluster),
        planner,
        settings,
        clock=lambda: cluster.clock,
        out=io.StringIO(),
    )
    enacted: Enacted = []
    for _ in range(count):
        report = ctl.step()
        assert report.error is None and report.decision is not None
        assert isinstance(report.decision.allocation, JobTable)  # columns, as the solver made
        enacted.append([(a.job, str(a.kind), a.gpu_type, a.placement) for a in report.actions])
        cluster.clock += ROUND
    return enacted


def test_the_same_rounds_in_process_and_over_http(service: Service, tmp_path: Path) -> None:
    here = _rounds(RoundPlanner(), tmp_path / "here.json")
    remote = RoundPlanner.remote(service.base, timeout=30)
    assert remote.where == service.base
    try:
        there = _rounds(remote, tmp_path / "there.json")
    finally:
        remote.close()
    assert here == there
    assert any(action[1] == "start" for actions in here for action in actions)


def test_one_decision_is_the_same_table_both_ways(service: Service) -> None:
    snapshot = {
        "gpu_types": [{"name": "v100", "count": 2}, {"name": "k80", "count": 2}],
        "jobs": [{"id": f"j{i}", "throughput": THROUGHPUT["ab"[i % 2]]} for i in range(3)],
    }
    remote = RoundPlanner.remote(service.base, timeout=30)
    try:
        there = remote.decide(snapshot, "max_min_fairness", {})
    finally:
        remote.close()
    here = RoundPlanner().decide(snapshot, "max_min_fairness", {})
    assert here.status == there.status == "optimal"
    assert here.allocation.ids == there.allocation.ids == ["j0", "j1", "j2"]
    assert here.allocation.allocation.tolist() == there.allocation.allocation.tolist()


def test_no_answer_is_one_line_naming_where_it_was_asked() -> None:
    bad = {"gpu_types": [{"name": "v100", "count": 1}], "jobs": [{"id": "x", "scale_factor": 0}]}
    with pytest.raises(PlanError, match=r"^the policy refused the snapshot: .*scale_factor"):
        RoundPlanner().decide(bad, "max_min_fairness", {})
    url = f"http://127.0.0.1:{free_port()}"
    nobody = RoundPlanner.remote(url, timeout=2, retries=0)
    with pytest.raises(PlanError, match=rf"^apportion at {url}: no answer"):
        nobody.decide(bad, "max_min_fairness", {})
    nobody.close()
