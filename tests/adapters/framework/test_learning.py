"""Learning the rows from the progress jobs report (`framework.learning`): the observations a
round takes from the baselines (worked by hand), and the controller on the in-memory cluster
whose jobs report their steps: the estimate is kept in the state file, tightens toward the
true rate round after round, and its rows are what the policy is given; an old state file
loads; a failing estimate changes no baseline."""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from apportion.adapters.framework import Controller, Job, RoundPlanner, Settings
from apportion.adapters.framework.learning import observations, user_reference
from apportion.client import ServiceError, connect
from tests.adapters.framework.memory import MemoryCluster, MemoryIntegration, MemoryJob

ROUND = 60.0
TABLE = {"resnet50": {"v100": 4.0, "k80": 1.0}, "lm": {"v100": 2.0, "k80": 1.0}}
#: What the jobs really do: resnet50 half its table row, lm as its row says.
TRUE = {"resnet50": {"v100": 2.0, "k80": 0.5}, "lm": {"v100": 2.0, "k80": 1.0}}


def test_one_observation_per_job_that_ran_on_one_type_since_its_baseline() -> None:
    before = {
        "ran": {"steps": 100.0, "received": {"v100": 60.0}},
        "moved": {"steps": 10.0, "received": {"v100": 60.0}},
        "requeued": {"steps": 500.0, "received": {"k80": 30.0}},
        "waited": {"steps": 40.0, "received": {"k80": 30.0}},
    }
    reported = {"ran": 700.0, "moved": 90.0, "requeued": 20.0, "waited": 40.0, "new": 5.0}
    received = {
        "ran": {"v100": 180.0},  # 120 s more on v100, 600 steps more
        "moved": {"v100": 90.0, "k80": 20.0},  # time on two types: cannot be split
        "requeued": {"k80": 50.0},  # counting from 0 again
        "waited": {"k80": 30.0},  # no time gained
        "new": {"k80": 10.0},  # no baseline yet
    }
    found, after = observations(before, reported, received)
    assert found == [{"job": "ran", "gpu_type": "v100", "steps": 600.0, "seconds": 120.0}]
    # Every reporting job's baseline moves to now, observed or not.
    assert after == {j: {"steps": reported[j], "received": received[j]} for j in reported}


def test_the_table_becomes_a_reference_of_scale_factor_one() -> None:
    ref = user_reference(TABLE)
    assert ref["gpu_types"] == ["k80", "v100"]
    assert ref["job_types"][0] == {
        "model": "resnet50",
        "scale_factor": 1,
        "throughput": TABLE["resnet50"],
    }


class _Reporting(MemoryIntegration):
    """The memory cluster whose jobs report the steps they did at their true rate."""

    def read(self) -> MemoryCluster:
        self.cluster.settle()
        return super().read()

    def progress(self, job: Job[MemoryJob]) -> float | None:
        ran = self.cluster.ran.get(job.id, {})
        return sum(s * TRUE[job.key][g] for g, s in ran.items())

    def reference(self) -> Mapping[str, Mapping[str, float]]:
        return TABLE


class _Remembering(RoundPlanner):
    """Keeps the snapshots the policy was asked about."""

    def __init__(self, client: Any = None) -> None:
        super().__init__(client)
        self.asked: list[Mapping[str, Any]] = []

    def decide(self, snapshot: Mapping[str, Any], policy: str, options: Mapping[str, Any]) -> Any:
        self.asked.append(snapshot)
        return super().decide(snapshot, policy, options)


def _run(tmp_path: Path, planner: RoundPlanner, rounds: int) -> tuple[MemoryCluster, Path]:
    cluster = MemoryCluster(nodes={"v0": ("v100", 1), "k0": ("k80", 1)})
    cluster.add("a", "resnet50", 1, TABLE["resnet50"])
    cluster.add("b", "lm", 1, TABLE["lm"])
    state = tmp_path / "state.json"
    settings = Settings(state, round_seconds=ROUND, rule="deficit", allow_preemption=True)
    ctl = Controller(
        _Reporting(cluster), planner, settings, clock=lambda: cluster.clock, out=io.StringIO()
    )
    for _ in range(rounds):
        outcome = ctl.step()
        assert outcome.error is None, outcome.error
        cluster.clock += ROUND
    return cluster, state


def test_the_estimate_kept_in_the_state_file_tightens_to_the_true_rate(tmp_path: Path) -> None:
    planner = _Remembering()
    cluster, state = _run(tmp_path, planner, 8)
    saved = json.loads(state.read_text())
    doc = saved["estimate"]
    assert set(doc["jobs"]) == {"a", "b"}
    # Each job's baseline is what it reported at the last reading, with its ledger then.
    for job, base in saved["steps"].items():
        assert base["received"] == pytest.approx(saved["received"][job])
    observed = [g for g, seconds in cluster.ran["a"].items() if seconds >= 2 * ROUND]
    assert observed  # 8 rounds, 2 jobs, 2 GPUs: a ran at least twice on some type
    for gpu_type in observed:  # a round's first reading is only a baseline
        cell = doc["jobs"]["a"]["throughput"][gpu_type]
        assert cell["mean"] == pytest.approx(TRUE["resnet50"][gpu_type], rel=0.05)
        assert cell["sigma"] < 0.1  # the table's prior was 0.4 wide
    # The policy was given the learned rows, not the table's.
    last = {j["id"]: j["throughput"] for j in planner.asked[-1]["jobs"]}
    learned = {g: c["mean"] for g, c in doc["jobs"]["a"]["throughput"].items()}
    assert last["a"] == pytest.approx(learned)
    assert last["a"] != pytest.approx(TABLE["resnet50"])


def test_a_state_file_without_steps_or_estimate_still_loads(tmp_path: Path) -> None:
    from apportion.adapters.framework import ledger

    path = tmp_path / "old.json"
    path.write_text(json.dumps({"version": 1, "updated": 10.0, "received": {"7": {"v100": 5.0}}}))
    loaded = ledger.load(path, [], now=20.0)
    assert loaded.problem is None
    assert loaded.ledger.steps == {} and loaded.ledger.estimate is None


class _Failing:
    """A client whose estimate calls fail, and whose solves work."""

    def __init__(self) -> None:
        self.inner = connect()
        self.where, self.local = self.inner.where, self.inner.local

    def estimate(self, request: Any) -> Any:
        raise ServiceError(None, "connection refused")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_a_failing_estimate_keeps_the_table_and_moves_no_baseline(tmp_path: Path) -> None:
    planner = _Remembering(_Failing())
    _, state = _run(tmp_path, planner, 3)
    saved = json.loads(state.read_text())
    assert saved["steps"] == {} and saved["estimate"] is None
    last = {j["id"]: j["throughput"] for j in planner.asked[-1]["jobs"]}
    assert last["a"] == TABLE["resnet50"]
