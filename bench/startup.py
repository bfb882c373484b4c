"""CLI start-up: `solve --help` and a 96-job max-min solve as whole processes, against
`python -c "import numpy"` timed in the same run (targets: ≤ 2× and ≤ 4× that).

The processes run as an installed deployment would: with bytecode caching on (an environment
that sets PYTHONDONTWRITEBYTECODE recompiles the project's ~40 modules on every start) and after
one untimed run that writes the cache."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from apportion.refdata import FIXTURES
from bench.harness import Case, Row

RUNS = 11
BASELINE = [sys.executable, "-c", "import numpy"]
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _run(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=ENV
    )
    return time.perf_counter() - started


def paired_seconds(command: list[str]) -> tuple[float, float]:
    """Median wall times of `command` and of the baseline, run alternately (after one untimed
    run of each): a machine whose load drifts then moves both alike."""
    _run(command)
    _run(BASELINE)
    ours, base = [], []
    for _ in range(RUNS):
        base.append(_run(BASELINE))
        ours.append(_run(command))
    return statistics.median(ours), statistics.median(base)


def cli_row(case: Case, args: list[str], target_ratio: float) -> Row:
    total, base = paired_seconds([sys.executable, "-m", "apportion", *args])
    ratio = total / base
    verdict = "yes" if ratio <= target_ratio else "NO"
    return Row(
        case=case,
        jobs=96 if args[0].endswith(".json") else 0,
        types=3 if args[0].endswith(".json") else 0,
        validate=0.0,
        build=0.0,
        solve=0.0,
        total=total,
        objective=None,
        status="",
        backend="cli",
        ratio=ratio,
        note=f"`import numpy` {base:.3f} s; target ≤ {target_ratio:g}×: {verdict}",
    )


def cases() -> list[Case]:
    snapshot = str(Path(FIXTURES) / "gavel_physical_96.json")
    return [
        Case(
            "startup",
            "solve --help (whole process)",
            dict,
            "",
            runner=lambda case: cli_row(case, ["--help"], 2.0),
        ),
        Case(
            "startup",
            "solve gavel_physical_96.json, max-min (whole process)",
            dict,
            "",
            runner=lambda case: cli_row(case, [snapshot, "--format", "json"], 4.0),
        ),
    ]
