"""Placement mode (DeepShare): event-driven starts on nodes, contention slowdown from the CS
table applied to running jobs and lifted when a co-runner leaves."""

from __future__ import annotations

from dataclasses import replace

import pytest

from apportion.simulator.config import SimConfig
from apportion.simulator.engine import simulate
from apportion.solver.snapshot.contention import ClassDefault, ContentionTable
from tests.simulator.helpers import job, trace

SPEED = {"gpu": 1.0}
# Both classes run at half speed next to each other (CS = 2).
TABLE = ContentionTable(
    class_defaults=[
        ClassDefault(target_class="X", co_runner_class="Y", cs=2.0),
        ClassDefault(target_class="Y", co_runner_class="X", cs=2.0),
    ]
)
# Two-node shapes only, so both jobs share both nodes; W1 small enough to start both.
OPTIONS = {"w1": 0.1, "shapes": {"2": [[2, 1]]}}


def _trace(jobs: list) -> object:
    return replace(trace(jobs, {"gpu": 4}, per_node=2), contention=TABLE)


def test_co_runners_slow_each_other_down_until_one_leaves() -> None:
    """X (1000 s alone) and Y (3000 s alone) share both nodes at half speed until X finishes at
    2000 s; Y has 2000 s of work left, done alone at full speed by 4000 s."""
    jobs = [
        job("x", 1000.0, gpus=2, speed=SPEED, workload_class="X"),
        job("y", 3000.0, gpus=2, speed=SPEED, workload_class="Y"),
    ]
    config = SimConfig(policy="contention_placement", options=OPTIONS)
    result = simulate(_trace(jobs), config)  # type: ignore[arg-type]
    finish = result.records.set_index("job")["finish"]
    assert finish["x"] == pytest.approx(2000.0)
    assert finish["y"] == pytest.approx(4000.0)
    assert (result.records["moves"] == 0).all()  # running jobs are never moved


def test_without_a_table_placement_has_no_slowdown() -> None:
    jobs = [job(f"j{i}", 1000.0, gpus=2, speed=SPEED, workload_class="X") for i in range(2)]
    result = simulate(trace(jobs, {"gpu": 4}, per_node=2), SimConfig(policy="deepshare"))
    assert result.records["finish"].tolist() == pytest.approx([1000.0, 1000.0])


def test_a_baseline_starts_waiting_jobs_when_gpus_free_up() -> None:
    jobs = [job(f"j{i}", 1000.0 * (i + 1), gpus=2, speed=SPEED) for i in range(3)]
    config = SimConfig(policy="fifo_baseline", mode="placement")  # type: ignore[arg-type]
    result = simulate(trace(jobs, {"gpu": 4}, per_node=2), config)
    start = result.records.set_index("job")["first_start"]
    assert start["j0"] == start["j1"] == 0.0
    assert start["j2"] == pytest.approx(1000.0)  # the moment j0 leaves its GPUs
