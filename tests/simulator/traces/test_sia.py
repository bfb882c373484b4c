"""Sia's workloads as rigid jobs: steps and speeds worked out from the data."""

from __future__ import annotations

import pytest

from apportion.refdata.sia import application, workload
from apportion.simulator.traces.sia import read_sia_rigid, rigid_placement, rigid_steps


def test_rigid_steps_are_the_runs_last_epoch() -> None:
    app = application("cifar10")
    # cifar10-0 trains at 4096: the last row of validation-4096.csv
    assert rigid_steps(app, 4096) == app.curves[-1].iteration[99]
    halfway = (app.curves[-2].iteration[99] + app.curves[-1].iteration[99]) / 2
    assert rigid_steps(app, 3072) == pytest.approx(halfway)


def test_placements_fill_nodes() -> None:
    assert rigid_placement(3, 4) == (3,)
    assert rigid_placement(12, 8) == (8, 4)
    assert rigid_placement(16, 8) == (8, 8)


def test_the_trace() -> None:
    trace = read_sia_rigid(workload("saturn", 1))
    assert len(trace.jobs) == 160
    assert trace.cluster.gpu_counts == {"t4": 24, "a100": 16, "rtx2080ti": 24}
    first = trace.jobs[0]
    assert (first.id, first.arrival, first.scale_factor) == ("cifar10-0", 401.0, 12)
    assert first.restart_seconds == 50.0
    # an A100 is faster than a T4 for every cifar10 job (yolov3 on 4 GPUs is not, in the data)
    both = [j for j in trace.jobs if j.workload_class == "cifar10"]
    assert both and all(j.throughput["a100"] > j.throughput["t4"] for j in both)
