"""`apportion-slurm` processes on the live cluster, as an operator runs them: one instance per
cluster and scope (a second is refused, naming the first's pid), a broken state file refused
until it is restored or a rebuild asked for (exit 3, nothing changed), and an adapter killed
with SIGKILL in the middle of a round restarted cleanly: nothing lost, started twice, left
without its GPUs or held for good."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from apportion.adapters.framework import ledger
from apportion.adapters.slurm.local.cluster import Cluster
from tests.adapters.slurm.driving import (
    TABLE,
    assert_no_gpu_oversubscribed,
    fingerprint,
    jobs,
    running_soon,
    submit,
)

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def args(tmp_path: Path) -> list[str]:
    table = tmp_path / "throughputs.json"
    table.write_text(json.dumps(TABLE))
    return ["--throughputs", str(table), "--allow-preemption", "--round-rule", "deficit"]


def _env(cluster: Cluster, tmp_path: Path) -> dict[str, str]:
    # The one-instance locks of this test, not of the machine.
    return {**cluster.env, "APPORTION_LOCK_DIR": str(tmp_path / "locks")}


def _command(state: Path, args: list[str], *more: str) -> list[str]:
    return [sys.executable, "-m", "apportion.adapters.slurm", "--state", str(state), *args, *more]


def _run(cluster: Cluster, tmp_path: Path, command: list[str]) -> subprocess.CompletedProcess[str]:
    env = _env(cluster, tmp_path)
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def _started(cluster: Cluster, tmp_path: Path, command: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        command,
        cwd=ROOT,
        env=_env(cluster, tmp_path),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def _until(process: subprocess.Popen[str], event: str, count: int = 1) -> None:
    """Read the adapter's JSON log until `event` has been logged `count` times."""
    assert process.stderr is not None
    seen = 0
    for line in process.stderr:
        seen += json.loads(line).get("event") == event
        if seen >= count:
            return
    raise AssertionError(f"the adapter ended before logging {event!r} {count} time(s)")


def test_a_second_instance_on_the_same_jobs_is_refused(
    cluster: Cluster, tmp_path: Path, args: list[str]
) -> None:
    ids = submit(cluster, [("--gres=gpu:8", "lm")] * 2)
    first = _started(
        cluster, tmp_path, _command(tmp_path / "a.json", args, "--round-seconds", "60")
    )
    try:
        _until(first, "round")
        assert all(running_soon(cluster, ids)[j].running for j in ids)
        before = fingerprint(cluster)
        # The same state file, or another one on the same cluster and scope: refused.
        for state in ("a.json", "b.json"):
            done = _run(cluster, tmp_path, _command(tmp_path / state, args, "--rounds", "1"))
            assert done.returncode == 2, done.stderr
            (line,) = done.stderr.strip().splitlines()
            assert line.startswith("apportion-slurm: error: another instance manages the same")
            assert f"pid {first.pid} on host " in line
        assert fingerprint(cluster) == before
        # Another scope (partition k80) is another instance's to manage.
        other = _command(tmp_path / "c.json", args, "--rounds", "1", "--partition", "k80")
        assert _run(cluster, tmp_path, other).returncode == 0
        # A dry run changes nothing, and may look while the adapter runs.
        dry = _command(tmp_path / "a.json", args, "--rounds", "1", "--dry-run")
        assert _run(cluster, tmp_path, dry).returncode == 0
    finally:
        first.send_signal(signal.SIGTERM)
        assert first.wait(timeout=60) == 0
    # Once it has ended, the next instance runs.
    again = _run(cluster, tmp_path, _command(tmp_path / "b.json", args, "--rounds", "1"))
    assert again.returncode == 0, again.stderr


def test_a_truncated_state_file_is_refused_until_restored(
    cluster: Cluster, tmp_path: Path, args: list[str]
) -> None:
    submit(cluster, [("--gres=gpu:8", m) for m in ["lm", "gan", "resnet50", "lm", "gan"]])
    state = tmp_path / "state.json"
    one = _command(state, args, "--rounds", "1")
    assert _run(cluster, tmp_path, one).returncode == 0
    deadline = time.monotonic() + 180  # how soon Slurm runs the released jobs is the machine's
    while True:
        time.sleep(1.0)
        assert _run(cluster, tmp_path, one).returncode == 0  # the copy: a ledger with time
        kept = json.loads(state.read_text())
        if kept["received"] or time.monotonic() > deadline:
            break
    assert kept["received"] and kept["holds"]
    text = state.read_text()
    state.write_text(text[: len(text) // 2])
    before = fingerprint(cluster)
    done = _run(cluster, tmp_path, one)
    assert done.returncode == 3
    (line,) = done.stderr.strip().splitlines()
    assert "the state file is unusable, so nothing was done" in line and "Invalid JSON" in line
    assert f"`cp {ledger.last_good(state)} {state}`" in line
    assert fingerprint(cluster) == before and state.read_text() == text[: len(text) // 2]
    # The way back the line names: the last good copy, then the adapter runs on with it.
    shutil.copy(ledger.last_good(state), state)
    assert json.loads(state.read_text()) == kept
    assert _run(cluster, tmp_path, one).returncode == 0
    after = json.loads(state.read_text())["received"]
    for job, per in kept["received"].items():  # history kept: only ever more time
        for kind, seconds in per.items():
            assert after[job][kind] >= seconds
    # Or the operator asks for a rebuild, and history is lost knowingly.
    state.write_text("")
    assert _run(cluster, tmp_path, one).returncode == 3
    assert _run(cluster, tmp_path, [*one, "--rebuild-state"]).returncode == 0


def test_killed_mid_round_and_restarted_nothing_is_lost_or_started_twice(
    cluster: Cluster, tmp_path: Path, args: list[str]
) -> None:
    ids = submit(cluster, [("--gres=gpu:4", m) for m in ["resnet50", "lm", "gan"] * 4])
    state = tmp_path / "state.json"
    adapter = _started(cluster, tmp_path, _command(state, args, "--round-seconds", "3"))
    try:
        _until(adapter, "round")  # round 1 enacted
        _until(adapter, "action", 2)  # round 2 under way: killed between two commands
    finally:
        adapter.send_signal(signal.SIGKILL)
        adapter.wait(timeout=30)
    assert not ledger.load(state, []).fatal  # never half a file
    restarted = _run(
        cluster, tmp_path, _command(state, args, "--rounds", "3", "--round-seconds", "3")
    )
    assert restarted.returncode == 0, restarted.stderr[-2000:]
    time.sleep(3.0)
    now = jobs(cluster)
    assert all(now[j].state in ("RUNNING", "PENDING") for j in ids)  # none lost
    assert not [j for j in ids if now[j].without_gpus]
    assert_no_gpu_oversubscribed(cluster)  # none started twice on the same GPUs
    running = [j for j in ids if now[j].running]
    assert sum(sum(now[j].placement.values()) for j in running) == 32  # the cluster is full
    # Every held job is held by the adapter (its book), so a later round starts it.
    book = json.loads(state.read_text())["holds"]
    assert {j for j in ids if now[j].held} <= set(book)
    assert os.path.exists(ledger.last_good(state))
