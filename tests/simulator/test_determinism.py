"""A simulation is a function of its trace, policy, options and seed: run idle and again beside
processes that keep the CPUs busy, it makes the same decisions and records the same results
(only the wall time it reports may differ)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

import pandas as pd

from apportion.simulator.config import SimConfig
from apportion.simulator.engine import simulate
from apportion.simulator.result import SimulationResult
from apportion.simulator.trace import Trace
from apportion.simulator.traces import read_chronus_csv, read_deepshare_trace, read_tiresias_csv

#: What a run reports of the wall clock: how long calls took, never what they decided.
WALL_COLUMNS = ["seconds", "solver_seconds", "cpu_seconds"]
WALL_SUMMARY = {
    "wall_seconds",
    "simulator_seconds",
    "policy_seconds",
    "solver_seconds",
    "mechanism_seconds",
    "policy_cpu_seconds",
    "cpu_seconds",
    "simulator_cpu_share",
}


@contextmanager
def cpu_hogs(count: int = 2) -> Iterator[None]:
    """`count` busy-looping processes for the duration of the block."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def _idle_and_loaded(trace: Trace, config: SimConfig) -> tuple[SimulationResult, SimulationResult]:
    idle = simulate(trace, config)
    with cpu_hogs():
        loaded = simulate(trace, config)
    return idle, loaded


def _assert_same_run(idle: SimulationResult, loaded: SimulationResult) -> None:
    pd.testing.assert_frame_equal(idle.records, loaded.records)
    pd.testing.assert_frame_equal(idle.timeseries, loaded.timeseries)
    pd.testing.assert_frame_equal(
        idle.calls.drop(columns=WALL_COLUMNS), loaded.calls.drop(columns=WALL_COLUMNS)
    )
    decided = {k: v for k, v in idle.summary.items() if k not in WALL_SUMMARY}
    assert decided == {k: loaded.summary[k] for k in decided}


def test_a_deepshare_placement_run_is_the_same_idle_and_under_load() -> None:
    full = read_deepshare_trace()
    trace = replace(full, jobs=full.jobs[:64])
    # A fifth of the default limit per call: on the wall clock, this slice's calls stop at
    # different points under load (7 % of the calls end otherwise), on counted work they do not.
    config = SimConfig(policy="deepshare", options={"time_limit": 0.2})
    idle, loaded = _idle_and_loaded(trace, config)
    _assert_same_run(idle, loaded)
    # The per-call limit bites: some calls stop at their counted work, and say so.
    assert idle.summary["calls_at_work_limit"] > 0
    assert idle.summary["calls_at_time_limit"] == 0
    assert set(idle.calls["termination"]) <= {"optimal", "iteration_limit", "solution_limit"}


def test_a_tiresias_run_is_the_same_idle_and_under_load() -> None:
    idle, loaded = _idle_and_loaded(read_tiresias_csv(), SimConfig(policy="tiresias_las"))
    _assert_same_run(idle, loaded)
    assert idle.summary["policy_calls"] > 0


def test_a_deadline_lease_run_is_the_same_idle_and_under_load() -> None:
    full = read_chronus_csv()
    trace = replace(full, jobs=full.jobs[:20])
    idle, loaded = _idle_and_loaded(trace, SimConfig(policy="deadline_admission"))
    _assert_same_run(idle, loaded)
    assert idle.summary["policy_calls"] > 0
