"""`python -m apportion.adapters.ray.tryout` as an operator runs it: `--help` shows the
defaults, and a run starts its own Ray cluster, queues jobs, prints a dry run and the rounds
with what Ray holds after each (each started job's placement group created where the round
put it), the ledger, and stops everything it started."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from apportion.adapters.ray.tryout import JOBS, build_parser

ROOT = Path(__file__).resolve().parents[3]


def test_help_shows_the_defaults() -> None:
    text = " ".join(build_parser().format_help().split())
    assert "--rounds N rounds to run, 1 to 20 (default: 3)" in text
    assert "--round-seconds SECONDS length of a round (default: 5.0)" in text
    assert "--policy POLICY policy to solve (default: max_min_fairness)" in text
    assert "--round-rule {gavel,deficit} which jobs a round serves first (default: gavel)" in text


@pytest.mark.ray
@pytest.mark.slow
def test_the_tryout_runs_rounds_on_its_own_cluster_and_stops_everything() -> None:
    pytest.importorskip("ray", reason="no live Ray cluster: Ray is not installed")
    done = subprocess.run(
        [sys.executable, "-m", "apportion.adapters.ray.tryout", "--rounds", "2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode == 1 and "Ray would not start here" in done.stderr:
        pytest.skip(f"no live Ray cluster: {done.stderr.strip()}")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    out = done.stdout
    assert re.search(
        r"^a Ray cluster at \S+: n1 \(8 V100\), n2 \(8 V100\), n3 \(8 K80\)", out, re.M
    )
    assert sum(
        line.startswith("  job ") and "apportion-ray submit" in line for line in out.splitlines()
    ) == len(JOBS)
    assert "# round 1 (dry run: nothing is changed)\n" in out
    assert "\nround 1 (optimal allocation; 0 command(s) refused)\n" in out
    assert "\nround 2 (optimal allocation; 0 command(s) refused)\n" in out
    started = re.findall(
        r"(?:start|keep) +(?:runs|keeps its GPUs) on (\w+) \(([^)]+)\).*\n +Ray now: (.*)\n", out
    )
    assert started
    for kind, nodes, now in started:
        assert now == f"placement group created on {kind} ({nodes})", (kind, nodes, now)
    assert "skip    left alone: no throughput row for 'bert'" in out
    ledger = out.split("seconds received per GPU type (the adapter's ledger):\n")[1]
    assert re.search(r"job 1 +(v100|k80) \d+\.\d", ledger)
    directory = re.search(r"stopped the Ray cluster and removed (\S+)\n", out)
    assert directory is not None and not Path(directory[1]).exists()
