"""Failing safe on the live cluster, read back from Slurm: a failed solve changes nothing, a
dry run prints the exact commands the round then runs and changes nothing, running jobs are
never preempted unless allowed, and a broken state file is refused, then rebuilt on request."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import pytest

from apportion.adapters.framework import Kind
from apportion.adapters.framework.ledger import StateError
from apportion.adapters.slurm.local.cluster import Cluster
from tests.adapters.slurm.driving import (
    assert_enacted,
    controller,
    fingerprint,
    jobs,
    settle,
    submit,
)


def test_a_failed_solve_changes_nothing(cluster: Cluster, tmp_path: Path) -> None:
    submit(cluster, [("--gres=gpu:8", "lm")] * 5)
    first = controller(cluster, tmp_path / "state.json").step()
    assert_enacted(first, settle(cluster, first))
    before = fingerprint(cluster)
    # makespan needs each job's steps_remaining, which the adapter does not have.
    failing = controller(cluster, tmp_path / "state.json", policy="makespan")
    outcome = failing.step()
    assert (
        outcome.error is not None and "steps_remaining: required by the makespan" in outcome.error
    )
    assert outcome.actions == ()
    time.sleep(1.0)
    assert fingerprint(cluster) == before


def test_a_dry_run_prints_the_commands_the_round_then_runs(
    cluster: Cluster, tmp_path: Path
) -> None:
    ids = submit(
        cluster, [("--gres=gpu:4", "resnet50"), ("--gres=gpu:k80:2", "lm"), ("--gres=gpu:1", "gan")]
    )
    before = fingerprint(cluster)
    printed = io.StringIO()
    state = tmp_path / "state.json"
    dry = controller(cluster, state, dry_run=True)
    dry.out = printed
    assert dry.step().error is None
    time.sleep(1.0)
    assert fingerprint(cluster) == before  # nothing changed in Slurm
    assert not state.exists()  # nor in the adapter's state
    lines = printed.getvalue().splitlines()
    assert lines[0] == "# round 1 (dry run: nothing is changed)"
    assert sum(line.startswith("# job ") for line in lines) == len(ids)  # a reason per job
    commands = [line for line in lines if not line.startswith("#")]
    real = controller(cluster, state).step()
    assert commands == [" ".join(c) for a in real.actions for c in (*a.commands, *a.then)]
    assert [a.kind for a in real.actions] == [Kind.START] * 3
    assert_enacted(real, settle(cluster, real))


def test_without_preemption_running_jobs_run_on_and_a_restart_keeps_their_time(
    cluster: Cluster, tmp_path: Path
) -> None:
    ids = submit(
        cluster,
        [("--gres=gpu:8", "resnet50"), ("--gres=gpu:8", "lm")] * 2 + [("--gres=gpu:8", "gan")],
    )
    state = tmp_path / "state.json"
    first = controller(cluster, state, allow_preemption=False)
    outcome = first.step()
    now = settle(cluster, outcome)
    assert_enacted(outcome, now)
    running = {j for j in ids if now[j].running}
    assert len(running) == 4  # four 8-GPU nodes
    time.sleep(2.0)
    again = first.step()
    assert {a.job for a in again.actions if a.kind == Kind.FIXED} == running
    assert not any(a.commands for a in again.actions if a.job in running)
    saved = json.loads(state.read_text())["received"]
    # A restarted controller reads the file and also counts the time it was away.
    time.sleep(1.0)
    restarted = controller(cluster, state, allow_preemption=False)
    restarted.step()
    after = json.loads(state.read_text())["received"]
    for job in running:
        (kind,) = saved[job]
        assert after[job][kind] >= saved[job][kind] + 1.0
    # A corrupt file is refused: the round acts on nothing.
    state.write_text('{"version": 1, "received": "lost"}')
    before = fingerprint(cluster)
    with pytest.raises(StateError, match=r"state\.received: Input should be an object"):
        controller(cluster, state, allow_preemption=False).step()
    assert fingerprint(cluster) == before
    # Asked to, it is rebuilt from what Slurm says: each running job's time since its start.
    rebuilt = controller(cluster, state, allow_preemption=False, rebuild_state=True)
    rebuilt.step()
    read_at = time.time()
    data = json.loads(state.read_text())
    final, restarts = jobs(cluster), {j: f[-1] for j, f in fingerprint(cluster).items()}
    for job in running:
        assert final[job].running and restarts[job] == 0  # never preempted
        kind = final[job].running_type
        assert kind is not None
        assert abs(data["received"][job][kind] - (read_at - final[job].start_time)) <= 2.0
    assert final[ids[-1]].held or final[ids[-1]].running
