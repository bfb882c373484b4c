"""Sia's workloads as rigid jobs: steps and speeds worked out from the data."""

from __future__ import annotations

import json

import pytest

from apportion.refdata.sia import SIA_CLUSTER, application, workload, workload_path
from apportion.simulator.sources import TraceSpec
from apportion.simulator.traces.sia import (
    read_sia_rigid,
    rigid_placement,
    rigid_steps,
    spec_cluster,
)
from tests.cli_runner import invoke


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


def test_the_kind_reads_a_workload_on_a_cluster_of_sia_s_types() -> None:
    path = workload_path("philly", 3)
    trace = TraceSpec("sia", str(path), jobs=4, cluster={"a100": 16, "t4": 8}).load_trace()
    assert [j.id for j in trace.jobs] == [j.name for j in workload("philly", 3)[:4]]
    assert trace.cluster.gpu_counts == {"a100": 16, "t4": 8}
    # nodes of each type's own size: two 8-GPU A100 nodes, two 4-GPU T4 nodes
    assert sorted(n.gpus for n in trace.cluster.nodes) == [4, 4, 8, 8]
    assert all(set(j.throughput) <= {"a100", "t4"} for j in trace.jobs)
    assert spec_cluster(None) == SIA_CLUSTER


@pytest.mark.parametrize(
    ("cluster", "reason"),
    [({"v100": 8}, "Sia's GPU types"), ({"a100": 12}, "whole nodes of 8")],
)
def test_a_cluster_the_data_cannot_speak_for_is_refused(
    cluster: dict[str, int], reason: str
) -> None:
    with pytest.raises(ValueError, match=reason):
        TraceSpec("sia", cluster=cluster).load_trace()


def test_solve_simulate_replays_it() -> None:
    ran = invoke(
        ["simulate", "sia", "--jobs", "6", "--policy", "max_min_fairness", "--format", "json"]
    )
    assert ran.exit_code == 0, ran.stderr
    (summary,) = json.loads(ran.stdout)
    assert summary["policy"] == "max_min_fairness" and summary["finished"] == 6
