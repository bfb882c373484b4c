"""`python -m apportion.adapters.slurm.tryout` as an operator runs it: it starts its own Slurm
cluster, submits jobs, prints a dry run and the rounds with what Slurm shows after each, and stops
everything it started (no process of its cluster is left, its directory is gone)."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from apportion.adapters.slurm import tryout
from apportion.adapters.slurm.local import packages
from apportion.adapters.slurm.local.packages import Unavailable, ensure
from apportion.adapters.slurm.tryout import JOBS

ROOT = Path(__file__).resolve().parents[3]


def _processes_under(directory: str) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if directory in cmdline:
                found.append(f"{entry.name}: {cmdline}")
    return found


def test_the_tryout_runs_rounds_on_its_own_cluster_and_stops_everything() -> None:
    try:
        ensure()
    except Unavailable as exc:
        pytest.skip(f"no live Slurm cluster: {exc}")
    if os.geteuid() != 0:
        pytest.skip("no live Slurm cluster: the try-out needs root")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "apportion.adapters.slurm.tryout",
            "--rounds",
            "2",
            "--round-seconds",
            "4",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    out = done.stdout
    directory = re.search(r"^a Slurm cluster under (\S+): n1 \(8 V100\)", out, re.M)
    assert directory is not None, out[:500]
    assert out.count("\n  job ") >= len(JOBS)
    for options in JOBS:
        assert f": sbatch {options} train.sh\n" in out
    assert "# round 1 (dry run: nothing is changed)\n" in out
    assert "scontrol release" in out
    assert "\nround 1 (optimal allocation; 0 command(s) refused)\n" in out
    assert "\nround 2 (optimal allocation; 0 command(s) refused)\n" in out
    # Every job a round starts is then seen running by Slurm on the type the round chose.
    started = re.findall(r"start +runs on (\w+) \(([^)]+)\);.*\n +Slurm now: (.*)\n", out)
    assert started
    for kind, nodes, now in started:
        assert now == f"running on {kind} ({nodes})", (kind, nodes, now)
    assert "skip    left alone: no throughput row for 'bert' (its comment)" in out
    ledger = out.split("seconds received per GPU type (the adapter's ledger):\n")[1]
    assert re.search(r"job 1 +(v100|k80) \d+\.\d", ledger)
    assert out.rstrip().endswith(f"stopped the cluster and removed {directory[1]}")
    assert not Path(directory[1]).exists()
    assert _processes_under(directory[1]) == []


def test_help_gives_each_default_and_the_command_without_sudo_as_root(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "apportion.adapters.slurm.tryout", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stdout.split())  # argparse wraps lines where it likes
    for default in ("(default: 3)", "(default: 10.0)", "(default: max_min_fairness)"):
        assert default in said
    assert f"run it as: {tryout.command()}" in said
    monkeypatch.setattr(os, "geteuid", lambda: 0)  # a root container has no sudo
    assert "sudo" not in tryout.build_parser().format_help()
    assert tryout.command().endswith(" -m apportion.adapters.slurm.tryout")
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert tryout.command().startswith("sudo ")


def test_the_tryout_says_what_it_installs_before_apt_get_runs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """As root with Slurm missing: the line naming the packages is out before apt-get starts
    (here apt-get fails at once, so that nothing is installed on this machine)."""
    out = io.StringIO()
    ran: list[tuple[list[str], str]] = []

    def apt_get(command: list[str], **_: object) -> subprocess.CompletedProcess[str]:
        ran.append((command, out.getvalue()))
        return subprocess.CompletedProcess(command, 100, "", "E: no network here")

    monkeypatch.setattr(packages, "missing", lambda: ["slurmd", "munged"])
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(subprocess, "run", apt_get)
    assert tryout.main([], out=out) == 1
    assert [command[:2] for command, _ in ran] == [["apt-get", "update"]]
    before = ran[0][1]
    assert before.startswith("installing slurmctld slurmd slurm-client munge with apt-get")
    assert "(slurmd, munged missing)" in before
    assert "apt-get update failed: E: no network here" in capsys.readouterr().err
