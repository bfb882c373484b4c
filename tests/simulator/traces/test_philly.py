"""The Philly setup: the bundled three-day MIX2 sample on n32g4, its slowdown model, load and
job cuts as for any file trace."""

from __future__ import annotations

import pytest

from apportion.simulator.sources import TraceSpec
from apportion.simulator.traces.chronus import MINUTE


def test_the_sample_on_n32g4() -> None:
    trace = TraceSpec("philly").load_trace()
    assert len(trace.jobs) == 1258  # 1,259 rows, one without GPUs left out
    assert sum(trace.dropped.values()) == 1
    assert trace.cluster.gpu_counts == {"gpu": 128}
    assert {n.gpus for n in trace.cluster.nodes} == {4}
    assert max(j.arrival for j in trace.jobs) < 3 * 1440 * MINUTE
    skewed = [j for j in trace.jobs if j.placement_throughput]
    assert skewed and all(j.workload_class in {"vgg16", "alexnet"} for j in skewed)
    assert all(j.scale_factor >= 2 for j in skewed)
    for j in skewed:
        fewest = -(-j.scale_factor // 4)
        assert j.placement_throughput[fewest] == 1.0
        assert j.placement_throughput[fewest + 1] == pytest.approx(1 / 1.67)


def test_load_and_jobs_as_for_any_file_trace() -> None:
    plain = TraceSpec("philly", jobs=50).load_trace()
    dense = TraceSpec("philly", jobs=50, load=2.0).load_trace()
    assert len(plain.jobs) == 50
    assert [j.arrival / 2 for j in plain.jobs] == pytest.approx([j.arrival for j in dense.jobs])


def test_another_cluster() -> None:
    trace = TraceSpec("philly", jobs=10, cluster={"gpu": 64}, gpus_per_node=8).load_trace()
    assert len(trace.cluster.nodes) == 8
