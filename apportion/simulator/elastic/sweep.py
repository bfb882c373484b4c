"""Many elastic simulations at once, one process per run (spawned, so each process imports
what it needs): `ElasticRun` names a workload, a cluster scale and a policy — an apportion
elastic policy (`sia`, `ones`, `elastic_max_goodput`), `ones_search` (ONES's evolutionary
search), or a rigid round-based policy (`rigid:max_min_fairness`: Sia's "Gavel + TunedJobs"
setting, jobs at their trace GPUs and batch size, 6-minute rounds)."""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

RIGID = "rigid:"
#: Gavel's round length in Sia's experiments.
RIGID_ROUND_SECONDS = 360.0


@dataclass(frozen=True)
class ElasticRun:
    policy: str
    family: str = "saturn"  # saturn, philly (or the family the rate workloads sample: saturn)
    number: int = 1
    rate: int | None = None  # jobs per hour: Sia's `scale/rate_<rate>` workloads
    jobs: int | None = None  # the first jobs only
    options: tuple[tuple[str, Any], ...] = ()
    seed: int = 0


@dataclass
class ElasticOutcome:
    run: ElasticRun
    summary: dict[str, Any]
    records: pd.DataFrame
    seconds: float
    call_seconds: list[float] = field(default_factory=list)


def run_one(run: ElasticRun) -> ElasticOutcome:
    from apportion.refdata import sia

    started = time.perf_counter()
    jobs = sia.workload(run.family, run.number, rate=run.rate)[: run.jobs]
    if run.policy.startswith(RIGID):
        return _rigid(run, jobs, started)
    from apportion.simulator.elastic.engine import simulate_elastic
    from apportion.simulator.elastic.ones import OnesSearch
    from apportion.simulator.elastic.policies import ApportionElastic, SharedElastic

    decider: Any
    if run.policy == "ones_search":
        requests = {job.name: job.num_replicas for job in jobs}
        decider = OnesSearch(sia.SIA_CLUSTER, requests, seed=run.seed, **dict(run.options))
    elif run.policy == "elastic_max_min":
        decider = SharedElastic(run.policy, sia.SIA_CLUSTER, dict(run.options))
    else:
        decider = ApportionElastic(run.policy, sia.SIA_CLUSTER, dict(run.options))
    result = simulate_elastic(jobs, sia.SIA_CLUSTER, decider)
    elapsed = time.perf_counter() - started
    return ElasticOutcome(run, result.summary, result.records, elapsed, result.call_seconds)


def _rigid(run: ElasticRun, jobs: list[Any], started: float) -> ElasticOutcome:
    import numpy as np

    from apportion.simulator.config import SimConfig
    from apportion.simulator.engine import simulate
    from apportion.simulator.traces.sia import read_sia_rigid

    policy = run.policy.removeprefix(RIGID)
    config = SimConfig(policy=policy, options=dict(run.options), round_seconds=RIGID_ROUND_SECONDS)
    result = simulate(read_sia_rigid(jobs), config)
    records = result.records
    jct = records["jct"].dropna().to_numpy()
    summary = {
        "jobs": len(jobs),
        "finished": int(records["finished"].sum()),
        "jct_mean_hours": float(jct.mean() / 3600),
        "jct_p50_hours": float(np.median(jct) / 3600),
        "jct_p99_hours": float(np.quantile(jct, 0.99) / 3600),
        "makespan_hours": float(result.summary["makespan"] / 3600),
        "gpu_hours_per_job": float(records["gpu_seconds"].mean() / 3600),
        "restarts_per_job": float(records["moves"].mean()),
        "policy_seconds_p50": float(np.median(result.calls["seconds"])),
        "policy_seconds_p95": float(np.quantile(result.calls["seconds"], 0.95)),
    }
    elapsed = time.perf_counter() - started
    return ElasticOutcome(run, summary, records, elapsed, list(result.calls["seconds"]))


def run_elastic(
    runs: Sequence[ElasticRun], executor: Executor | None = None, workers: int | None = None
) -> list[ElasticOutcome]:
    """Every run, in order, on `executor` (default: a spawned process per core)."""
    pool = executor or ProcessPoolExecutor(
        max_workers=workers or os.cpu_count() or 1,
        mp_context=multiprocessing.get_context("spawn"),
    )
    try:
        return list(pool.map(run_one, runs))
    finally:
        if executor is None:
            pool.shutdown()
