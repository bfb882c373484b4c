"""Sweeps on Ray: a real local Ray started by the test gives the same records as a run one
after another; a run's own error comes back unwrapped; without Ray, `--executor ray` is one
line naming the extra to install."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from apportion.simulator.config import SimConfig
from apportion.simulator.executors import ExecutorUnavailable, RayExecutor, make_executor
from apportion.simulator.sources import TraceSpec
from apportion.simulator.sweep import RunFailed, SweepSpec, run_one, run_sweep
from tests.cli_runner import invoke

SPEC = SweepSpec(
    policies=("max_min_fairness", ("srtf", {"preemptive": True})),
    traces=(TraceSpec("gavel", jobs=12),),
    seeds=(0, 1),
    loads=(2.0,),
    config=SimConfig(preemption_seconds=10.0),
)


def test_executors_by_name() -> None:
    assert make_executor("processes") is None  # the sweep's own pool
    with pytest.raises(ValueError, match="executor: 'dask' is not one of processes, ray"):
        make_executor("dask")


def test_an_address_nothing_listens_on_is_one_line_exit_1(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ray = pytest.importorskip("ray")
    if ray.is_initialized():  # the sweep would run on that connection, whatever the address
        pytest.skip("this process is connected to a Ray cluster already")
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")  # a port nothing listens on
    ran = invoke(["simulate", "gavel", "--jobs", "4", "--policy", "srtf,las", "--executor", "ray"])
    assert ran.exit_code == 1
    [line] = ran.stderr.strip().splitlines()
    assert line.startswith("error: --executor ray: cannot reach Ray at 127.0.0.1:1: "), line


def test_without_ray_the_ray_executor_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails as if not installed
    ran = invoke(
        ["simulate", "gavel", "--jobs", "4", "--policy", "srtf,las", "--executor", "ray"]
    )  # fmt: skip
    assert ran.exit_code == 2
    assert ran.stderr.strip().splitlines() == [
        "error: --executor ray: the ray executor needs Ray: pip install 'apportion[ray]'"
    ]


@pytest.fixture(scope="module")
def on_ray() -> Iterator[RayExecutor]:
    try:
        pool = RayExecutor(workers=2)
    except ExecutorUnavailable as exc:
        pytest.skip(f"no local Ray: {exc}")
    try:
        yield pool
    finally:
        pool.shutdown()


@pytest.mark.ray
@pytest.mark.slow
def test_a_sweep_on_ray_gives_the_records_of_a_serial_one(on_ray: RayExecutor) -> None:
    with ThreadPoolExecutor(max_workers=1) as one_at_a_time:
        serial = run_sweep(SPEC, one_at_a_time)
    done = run_sweep(SPEC, on_ray)
    assert len(done.results) == 4
    pd.testing.assert_frame_equal(done.records(), serial.records())
    # Wall-clock and CPU measures of the host, the one thing that differs.
    kinds = ("policy", "solver", "wall", "simulator", "mechanism", "policy_cpu", "cpu")
    clock = [f"{k}_seconds" for k in kinds] + ["simulator_cpu_share"]
    pd.testing.assert_frame_equal(
        done.summary().drop(columns=clock), serial.summary().drop(columns=clock)
    )


@pytest.mark.ray
@pytest.mark.slow
def test_a_failed_run_on_ray_raises_its_own_error(on_ray: RayExecutor) -> None:
    run = SPEC.runs()[0]
    broken = replace(run, config=replace(run.config, policy="no_such_policy"))
    with pytest.raises(RunFailed, match="policy=no_such_policy"):
        on_ray.submit(run_one, broken).result(timeout=120)


@pytest.mark.ray
@pytest.mark.slow
def test_solve_simulate_runs_a_sweep_on_ray(on_ray: RayExecutor, tmp_path: Path) -> None:
    records = tmp_path / "records.csv"
    ran = invoke(
        ["simulate", "gavel", "--jobs", "12", "--policy", "max_min_fairness,srtf", "--load", "2",
         "--preemption-seconds", "10", "--executor", "ray", "--format", "json",
         "--output", str(records)]
    )  # fmt: skip
    assert ran.exit_code == 0, ran.stderr
    assert [row["policy"] for row in json.loads(ran.stdout)] == ["max_min_fairness", "srtf"]
    ours = [r for r in SPEC.runs() if r.seed == 0 and r.config.policy == "max_min_fairness"]
    with ThreadPoolExecutor(max_workers=1) as one_at_a_time:
        serial = run_sweep(ours, one_at_a_time).records()
    written = pd.read_csv(records)
    mine = written[written["policy"] == "max_min_fairness"].reset_index(drop=True)
    assert mine["jct"].tolist() == pytest.approx(serial["jct"].tolist())
