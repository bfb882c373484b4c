"""The shared controller on a second integration (an in-memory cluster, `memory.py`) that
implements only the required interface: rounds are enacted as planned and, over many rounds,
each job's time per GPU type follows the policy's allocation; the fail-safe rules hold (a
failing read, solve or planner changes nothing; a refused command stops that job's later
commands only; every command is logged; nothing is removed); optional capabilities are used
when offered."""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from apportion.adapters.framework import (
    Controller,
    Job,
    Kind,
    Managed,
    RoundPlanner,
    RoundReport,
    Settings,
    SetupError,
)
from apportion.adapters.framework.actions import RUNS
from apportion.mechanism import Round, next_round
from apportion.solver.snapshot import parse_snapshot
from tests.adapters.framework.memory import MemoryCluster, MemoryIntegration, MemoryJob

ROUND = 60.0
THROUGHPUT = {
    "resnet50": {"v100": 4.0, "k80": 1.0},
    "lm": {"v100": 2.0, "k80": 1.0},
    "gan": {"v100": 3.0, "k80": 2.0},
}


def _cluster(jobs: int = 6) -> MemoryCluster:
    cluster = MemoryCluster(nodes={"v0": ("v100", 2), "k0": ("k80", 2), "k1": ("k80", 1)})
    for i in range(jobs):
        key = list(THROUGHPUT)[i % 3]
        cluster.add(f"j{i}", key, 1, THROUGHPUT[key])
    return cluster


def _controller(
    cluster: MemoryCluster, state: Path, integration: Any = None, **settings: Any
) -> Controller[MemoryCluster, MemoryJob]:
    options = {"allow_preemption": True, "round_seconds": ROUND, "rule": "deficit", **settings}
    return Controller(
        integration or MemoryIntegration(cluster),
        settings.pop("planner", None) or RoundPlanner(),
        Settings(state, **{k: v for k, v in options.items() if k != "planner"}),
        clock=lambda: cluster.clock,
        out=io.StringIO(),
    )


def _assert_enacted(outcome: RoundReport[MemoryJob], cluster: MemoryCluster) -> None:
    assert outcome.error is None and not outcome.failed, (outcome.error, outcome.failed)
    for action in outcome.actions:
        job = cluster.jobs[action.job]
        if action.kind in RUNS:
            assert (job.gpu_type, job.placement) == (action.gpu_type, action.placement), action
        else:
            assert job.gpu_type is None, action
    for node, (_, gpus) in cluster.nodes.items():
        assert cluster.used(node) <= gpus, node


def _replayed(outcomes: list[RoundReport[MemoryJob]], cluster: MemoryCluster) -> list[list[Any]]:
    """The rounds the mechanism computes when fed its own rounds' time and placements (each
    served job gains a round on its type), independently of the controller's reading."""
    snapshot = parse_snapshot(
        {
            "nodes": [{"id": n, "gpus": g, "gpu_type": k} for n, (k, g) in cluster.nodes.items()],
            "jobs": [
                {"id": j.id, "scale_factor": j.gpus, "throughput": j.throughput}
                for j in cluster.jobs.values()
            ],
        }
    )
    assert outcomes[0].decision is not None
    allocation = outcomes[0].decision.allocation
    received: dict[str, dict[str, float]] = {}
    previous: dict[str, dict[str, int]] = {}
    rounds = []
    for _ in outcomes:
        rnd = next_round(
            snapshot, allocation, received, previous, rule="deficit", round_seconds=ROUND
        )
        rounds.append([(a.job, a.gpu_type, a.placement) for a in rnd.assignments])
        for a in rnd.assignments:
            mine = received.setdefault(a.job, {})
            mine[a.gpu_type] = mine.get(a.gpu_type, 0.0) + ROUND
        previous = {a.job: dict(a.placement) for a in rnd.assignments}
    return rounds


def test_rounds_are_enacted_as_the_mechanism_plans_them(tmp_path: Path) -> None:
    cluster = _cluster()
    ctl = _controller(cluster, tmp_path / "state.json")
    outcomes = []
    for _ in range(12):
        outcome = ctl.step()
        _assert_enacted(outcome, cluster)
        outcomes.append(outcome)
        assert set(cluster.jobs) == {f"j{i}" for i in range(6)}  # nothing is ever removed
        cluster.clock += ROUND
    ctl.step()  # counts the last round
    cluster.settle()
    kinds = {a.kind for o in outcomes for a in o.actions}
    assert {Kind.START, Kind.KEEP, Kind.MOVE, Kind.PREEMPT} <= kinds  # 6 jobs, 5 GPUs
    assert {c[0] for c in cluster.enacted} == {"place", "run", "stop"}
    # The controller's ledger is what the cluster itself says ran, type by type.
    assert ctl.ledger is not None
    assert ctl.ledger.received.keys() == cluster.ran.keys()
    for job, per in cluster.ran.items():
        assert ctl.ledger.received[job] == pytest.approx(per)
    # Round after round, what was enacted is what the mechanism computes from what ran.
    enacted = []
    for o in outcomes:
        assert o.round is not None and o.decision is not None
        assert o.decision.allocation == outcomes[0].decision.allocation  # type: ignore[union-attr]
        enacted.append([(a.job, a.gpu_type, a.placement) for a in o.round.assignments])
    assert enacted == _replayed(outcomes, cluster)


def _started(tmp_path: Path) -> tuple[MemoryCluster, Controller[MemoryCluster, MemoryJob]]:
    cluster = _cluster()
    ctl = _controller(cluster, tmp_path / "state.json")
    _assert_enacted(ctl.step(), cluster)
    cluster.clock += ROUND
    return cluster, ctl


class _BrokenRead(MemoryIntegration):
    def managed(self, state: MemoryCluster) -> Managed[MemoryJob]:
        raise KeyError("gres")


class _BrokenPlanner(RoundPlanner):
    def next_round(self, *args: Any, **kwargs: Any) -> Round:
        raise ZeroDivisionError("division by zero")


@pytest.mark.parametrize(
    ("failure", "message"),
    [
        ("read", "cannot read memory: connection refused"),
        ("bug_in_read", "reading memory failed: KeyError: 'gres'"),
        ("solve", "steps_remaining: required by the makespan"),
        ("bug_in_planner", "planning failed: ZeroDivisionError: division by zero"),
    ],
)
def test_a_failing_read_solve_or_planner_changes_nothing(
    tmp_path: Path, failure: str, message: str
) -> None:
    cluster, ctl = _started(tmp_path)
    state = tmp_path / "state.json"
    if failure == "read":
        cluster.fail_read = "connection refused"
    elif failure == "bug_in_read":
        ctl.integration = _BrokenRead(cluster)
    elif failure == "solve":
        ctl = _controller(cluster, state, policy="makespan")  # needs steps_remaining
    else:
        ctl = _controller(cluster, state, planner=_BrokenPlanner())
    before, enacted, saved = cluster.fingerprint(), list(cluster.enacted), state.read_bytes()
    with capture_logs() as logs:
        outcome = ctl.step()
    assert outcome.error is not None and message in outcome.error
    assert outcome.actions == ()
    assert cluster.fingerprint() == before and cluster.enacted == enacted
    if failure.endswith("read"):
        assert state.read_bytes() == saved  # not even the ledger moved
    unchanged = [e for e in logs if e["event"] == "round_unchanged"]
    assert len(unchanged) == 1 and message in unchanged[0]["reason"]


def test_a_refused_command_stops_that_jobs_later_commands_only(tmp_path: Path) -> None:
    cluster = _cluster(jobs=4)
    cluster.refuse = ("place", "j1")
    with capture_logs() as logs:
        outcome = _controller(cluster, tmp_path / "state.json").step()
    starts = [a.job for a in outcome.planned(Kind.START)]
    assert sorted(starts) == ["j0", "j1", "j2", "j3"]
    assert len(outcome.failed) == 1 and outcome.failed[0].startswith("place j1 ")
    assert ("run", "j1") not in cluster.enacted  # its later command was not tried
    assert cluster.jobs["j1"].gpu_type is None
    assert all(cluster.jobs[j].gpu_type is not None for j in ("j0", "j2", "j3"))
    # Every command run is logged with its job and reason; the refused one as a failure.
    logged = [(e["job"], e["command"]) for e in logs if e["event"] == "action"]
    assert logged == [(c[1], " ".join(c)) for c in cluster.enacted]
    assert all(e["reason"] for e in logs if e["event"] == "action")
    (failed,) = [e for e in logs if e["event"] == "command_failed"]
    assert failed["job"] == "j1" and failed["error"].startswith("refused: place j1")


def test_a_dry_run_prints_each_job_and_command_and_changes_nothing(tmp_path: Path) -> None:
    cluster, _ = _started(tmp_path)
    cluster.add("late", "gan", 2, THROUGHPUT["gan"])
    state = tmp_path / "state.json"
    before, saved = cluster.fingerprint(), state.read_bytes()
    dry = _controller(cluster, state, dry_run=True)
    outcome = dry.step()
    assert cluster.fingerprint() == before and state.read_bytes() == saved
    assert isinstance(dry.out, io.StringIO)
    printed = dry.out.getvalue().splitlines()
    assert printed[0] == "# round 1 (dry run: nothing is changed)"
    assert [line for line in printed if line.startswith("# job ")] == [
        f"# job {a.job} ({cluster.jobs[a.job].key}, {cluster.jobs[a.job].gpus} GPU"
        f"{'s' if cluster.jobs[a.job].gpus > 1 else ''}): {a.kind}: {a.reason}"
        for a in outcome.actions
    ]
    commands = [line for line in printed if not line.startswith("#")]
    assert commands == [" ".join(c) for a in outcome.actions for c in (*a.commands, *a.then)]


class _OneNodeOnly(MemoryIntegration):
    """With `Fits`: job j0 cannot run on node k0."""

    def misfit(self, job: Job[MemoryJob], placement: Mapping[str, int]) -> str | None:
        return "it cannot run on k0" if job.id == "j0" and "k0" in placement else None


class _Unsupported(MemoryIntegration):
    """With `Checked`: refuses to run."""

    def check(self) -> None:
        raise SetupError("memory 0.1 is not supported")


def test_optional_capabilities_are_used_when_offered(tmp_path: Path) -> None:
    cluster = MemoryCluster(nodes={"k0": ("k80", 2)})
    cluster.add("j0", "lm", 1, {"k80": 1.0})
    cluster.add("j1", "lm", 1, {"k80": 1.0})
    outcome = _controller(cluster, tmp_path / "s.json", integration=_OneNodeOnly(cluster)).step()
    (waits,) = [a for a in outcome.actions if a.job == "j0"]
    assert waits.kind == Kind.WAIT and waits.commands == ()
    assert (
        waits.reason == "waits (held): the round places it on k80 (k0:1), but it cannot run on k0"
    )
    assert cluster.jobs["j0"].gpu_type is None and cluster.jobs["j1"].gpu_type == "k80"
    _controller(cluster, tmp_path / "s.json").check()  # no `check`: nothing to refuse
    with pytest.raises(SetupError, match=r"memory 0\.1 is not supported"):
        _controller(cluster, tmp_path / "s.json", integration=_Unsupported(cluster)).check()
