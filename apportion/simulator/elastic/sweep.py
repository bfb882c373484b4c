"""Many elastic simulations at once, one process per run (spawned, so each process imports
what it needs): `ElasticRun` names a workload, a cluster scale and a policy — an apportion
elastic policy (`sia`, `ones`, `elastic_max_goodput`), `ones_search` (ONES's evolutionary
search), or a rigid round-based policy (`rigid:max_min_fairness`: Sia's "Gavel + TunedJobs"
setting, jobs at their trace GPUs and batch size, 6-minute rounds)."""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    from apportion.refdata.sia import ClusterSpec
    from apportion.simulator.elastic.engine import Decider

RIGID = "rigid:"
#: apportion's elastic policies (their own names), and ONES's search, the elastic baseline.
ELASTIC_POLICIES = ("sia", "ones", "elastic_max_min", "elastic_max_goodput")
ONES_SEARCH = "ones_search"
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

    requests = {job.name: job.num_replicas for job in jobs}
    decider = make_decider(run.policy, sia.SIA_CLUSTER, dict(run.options), run.seed, requests)
    result = simulate_elastic(jobs, sia.SIA_CLUSTER, decider)
    elapsed = time.perf_counter() - started
    return ElasticOutcome(run, result.summary, result.records, elapsed, result.call_seconds)


def make_decider(
    policy: str,
    cluster: ClusterSpec,
    options: Mapping[str, Any],
    seed: int = 0,
    requests: Mapping[str, int] | None = None,
    known_start: bool = False,
) -> Decider:
    """The decider for an elastic policy (any of its names) or `ones_search` (which needs the
    GPUs each job asks for, `requests`: its limits grow from them); `known_start`: a new job's
    single-GPU throughputs known before it first runs (`elastic.belief.first_run`)."""
    from apportion.simulator.elastic.ones import OnesSearch
    from apportion.simulator.elastic.policies import ApportionElastic, SharedElastic
    from apportion.solver.registry import resolve

    if policy == ONES_SEARCH:
        decider: Decider = OnesSearch(cluster, dict(requests or {}), seed=seed, **dict(options))
        return decider
    resolved = resolve(policy)
    if resolved is None or resolved.policy not in ELASTIC_POLICIES:
        raise ValueError(f"{policy!r} is not an elastic policy")
    name = resolved.policy
    if name == "elastic_max_min":
        return SharedElastic(name, cluster, options, known_start=known_start)
    return ApportionElastic(name, cluster, options, known_start=known_start)


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
    """Every run, in order, on `executor` (default: a spawned process per core; any
    `concurrent.futures.Executor`, as a sweep's: a Dask client's, `executors.RayExecutor`)."""
    pool = executor or ProcessPoolExecutor(
        max_workers=workers or os.cpu_count() or 1,
        mp_context=multiprocessing.get_context("spawn"),
    )
    try:
        return list(pool.map(run_one, runs))
    finally:
        if executor is None:
            pool.shutdown()
