"""`python -m adapters.slurm` (the `apportion-slurm` console script) as an operator runs it:
bad arguments and input end with exit code 2 and one line naming the option or field; on the
live cluster it enacts rounds (exit 0) and, with apportion unreachable, changes nothing
(exit 1)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from apportion.adapters.slurm.cli import main
from tests.adapters.slurm.cluster import Cluster, free_ports
from tests.adapters.slurm.driving import TABLE, fingerprint, running_soon, submit

ROOT = Path(__file__).resolve().parents[3]


def _run(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "apportion.adapters.slurm", *args],
        cwd=ROOT,
        env=env or dict(os.environ),
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def table(tmp_path: Path) -> Path:
    path = tmp_path / "throughputs.json"
    path.write_text(json.dumps(TABLE))
    return path


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--rounds", "0"], "argument --rounds: '0' must be a whole number of rounds, at least 1"),
        (["--round-seconds", "-3"], "argument --round-seconds: '-3' must be a positive number"),
        (["--policy", "no_such"], "--policy 'no_such': no such policy"),
        (["--policy", "chronus"], "--policy deadline_admission: answers no time fractions"),
        (["-o", "novalue"], "--option 'novalue': expected KEY=VALUE"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(
    table: Path, args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = main(["--throughputs", str(table), *args])
    except SystemExit as exc:  # argparse's own errors
        code = int(str(exc.code))
    assert code == 2
    assert message in capsys.readouterr().err.strip().splitlines()[-1]


def test_a_bad_table_exits_2_naming_the_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"lm": {"v100": "fast"}}')
    done = _run(["--throughputs", str(bad)])
    assert done.returncode == 2
    assert done.stderr == (
        "apportion-slurm: error: throughputs.lm.v100: 'fast' is not a non-negative number of "
        "steps/s\n"
    )


def test_on_the_cluster_it_enacts_rounds_and_refuses_unknown_columns(
    cluster: Cluster, table: Path, tmp_path: Path
) -> None:
    unknown = tmp_path / "unknown.json"
    unknown.write_text('{"lm": {"v100": 2, "a100": 5}}')
    refused = _run(["--throughputs", str(unknown)], cluster.env)
    assert refused.returncode == 2
    assert refused.stderr == (
        "apportion-slurm: error: throughputs.lm.a100: not a GPU type of the cluster "
        "['k80', 'v100']\n"
    )
    ids = submit(cluster, [("--gres=gpu:8", "resnet50"), ("--gres=gpu:2", "lm")])
    (unmapped,) = submit(cluster, [("--gres=gpu:1", "bert")])  # no row in the table
    state = tmp_path / "state.json"
    args = ["--throughputs", str(table), "--state", str(state), "--round-seconds", "1"]
    done = _run([*args, "--rounds", "2", "--allow-preemption"], cluster.env)
    assert done.returncode == 0, done.stderr[-2000:]
    events = [json.loads(line) for line in done.stderr.splitlines()]
    assert [e["round"] for e in events if e["event"] == "round"] == [1, 2]
    assert any(
        e["event"] == "action" and e["command"].startswith("scontrol release") for e in events
    )
    # The job without a row is named once, and left alone.
    assert [e["job"] for e in events if e["event"] == "left_alone"] == [unmapped]
    warning = next(e for e in events if e["event"] == "left_alone")
    assert warning["level"] == "warning"
    assert warning["reason"].startswith("no throughput row for 'bert' (its comment)")
    now = running_soon(cluster, ids)
    assert all(now[j].running for j in ids), {j: (now[j].state, now[j].reason) for j in ids}
    assert now[unmapped].held
    # Every change Slurm shows was logged: the feature and priority each job was given.
    for job in ids:
        commands = " ".join(e["command"] for e in events if e.get("job") == job)
        assert f"scontrol release {job}" in commands
        assert f"Features={now[job].features} " in commands
        assert f"Priority={now[job].priority}" in commands
    # With apportion unreachable: exit 1, one logged reason per round, nothing changed.
    submit(cluster, [("--gres=gpu:8", "gan")])
    before = fingerprint(cluster)
    (port,) = free_ports(1)
    service = ["--service", f"http://127.0.0.1:{port}", "--service-timeout", "2"]
    down = _run([*args, *service, "--rounds", "1", "--allow-preemption"], cluster.env)
    assert down.returncode == 1
    logged = [json.loads(line) for line in down.stderr.splitlines()]
    assert [e["event"] for e in logged if e["level"] == "error"] == ["round_unchanged"]
    assert fingerprint(cluster) == before
    # That run still read the state file and counted each job's time since Slurm started it
    # (Slurm's start time is in whole seconds, and a job may start between a read and the clock).
    saved = json.loads(state.read_text())
    for job in ids:
        (seconds,) = saved["received"][job].values()
        ran = saved["updated"] - now[job].start_time
        assert ran - 1.0 <= seconds <= ran, (job, seconds, ran)
