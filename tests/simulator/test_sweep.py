"""Sweeps: one spec, many runs, any executor; the same records wherever they ran."""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import pandas as pd
import pytest

from apportion.simulator.config import SimConfig
from apportion.simulator.sources import TraceSpec
from apportion.simulator.sweep import SweepSpec, default_executor, run_one, run_sweep

SPEC = SweepSpec(
    policies=("max_min_fairness", ("srtf", {"preemptive": True})),
    traces=(TraceSpec("gavel", jobs=12),),
    seeds=(0,),
    loads=(1.0, 2.0),
    config=SimConfig(preemption_seconds=10.0),
)


def test_a_spec_is_the_product_of_its_axes() -> None:
    runs = SPEC.runs()
    assert len(runs) == 4
    assert {(r.config.policy, r.load) for r in runs} == {
        (p, load) for p in ("max_min_fairness", "srtf") for load in (1.0, 2.0)
    }
    assert all(r.config.preemption_seconds == 10.0 for r in runs)
    assert runs[2].config.options == {"preemptive": True}


def test_load_scales_arrivals() -> None:
    base = TraceSpec("gavel", jobs=12).load_trace()
    dense = TraceSpec("gavel", jobs=12, load=2.0).load_trace()
    assert [j.arrival / 2 for j in base.jobs] == pytest.approx([j.arrival for j in dense.jobs])


@pytest.fixture(scope="module")
def in_processes() -> pd.DataFrame:
    with ProcessPoolExecutor(max_workers=2) as pool:
        return run_sweep(SPEC, pool).records()


def test_a_sweep_keeps_the_spec_order_and_labels(in_processes: pd.DataFrame) -> None:
    expected = pd.concat([run_one(run).records for run in SPEC.runs()], ignore_index=True)
    pd.testing.assert_frame_equal(in_processes.iloc[:, 4:], expected)
    assert list(in_processes.columns[:4]) == ["policy", "trace", "seed", "load"]
    assert in_processes.groupby(["policy", "load"]).size().tolist() == [12] * 4


@pytest.mark.parametrize("processes", [False, True], ids=["dask-threads", "dask-processes"])
def test_a_dask_cluster_gives_the_same_records(processes: bool, in_processes: pd.DataFrame) -> None:
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=processes, dashboard_address=None
    )
    try:
        with distributed.Client(cluster) as client:
            result = run_sweep(SPEC, client.get_executor())
    finally:
        cluster.close()
    pd.testing.assert_frame_equal(result.records(), in_processes)
    assert len(result.summary()) == 4


def test_any_executor_will_do() -> None:
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = run_sweep(SPEC.runs()[:1], pool)
    assert done.summary()["finished"].tolist() == [12]


def test_the_default_pool_spawns_one_worker_per_core_asked() -> None:
    pool = default_executor(2)
    try:
        assert pool._max_workers == 2
    finally:
        pool.shutdown()
