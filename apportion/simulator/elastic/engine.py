"""The elastic simulation: Sia's round loop (its `multi_simulator`) over `jobs.ElasticJob`s.

Every `round_seconds` (Sia: 60 s) the decider is asked where each active job runs (node →
GPUs); jobs whose nodes change restart (checkpoint-restore time without progress); then every
job advances one round in its true progress model. Jobs arriving inside a round wait for the
next decision. An idle cluster jumps to the round of the next arrival.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import pandas as pd

from apportion.refdata.sia import ClusterSpec, WorkloadJob, application
from apportion.simulator.elastic.jobs import ElasticJob

Decision = dict[str, dict[str, int]]  # job → node → GPUs


class Decider(Protocol):
    name: str

    def decide(self, now: float, active: list[ElasticJob]) -> Decision: ...


@dataclass(frozen=True)
class ElasticConfig:
    round_seconds: float = 60.0
    max_time: float | None = None  # stop at this simulated time


@dataclass
class ElasticResult:
    policy: str
    records: pd.DataFrame
    summary: dict[str, Any]
    call_seconds: list[float] = field(default_factory=list)
    #: One row per decision: time, jobs waiting or running, jobs running, GPUs held.
    timeseries: pd.DataFrame = field(default_factory=pd.DataFrame)


def node_list(cluster: ClusterSpec) -> list[tuple[str, int, str]]:
    """(id, GPUs, type) of every node."""
    return [
        (f"{gpu}-{i}", cluster.gpus_per_node[gpu], gpu)
        for gpu, count in cluster.nodes.items()
        for i in range(count)
    ]


def make_jobs(workload: list[WorkloadJob], rigid: bool = False) -> list[ElasticJob]:
    return [
        ElasticJob(
            j.name,
            application(j.application),
            j.time,
            j.batch_size if rigid else None,
            target_batch=j.batch_size,
        )
        for j in sorted(workload, key=lambda j: j.time)
    ]


def simulate_elastic(
    workload: list[WorkloadJob],
    cluster: ClusterSpec,
    decider: Decider,
    config: ElasticConfig = ElasticConfig(),
) -> ElasticResult:
    """Replay `workload` on `cluster` under `decider`; see the module."""
    jobs = make_jobs(workload)
    type_of = {node: gpu for node, _, gpu in node_list(cluster)}
    length = config.round_seconds
    now, calls, series = 0.0, [], []
    arrivals = np.array([j.arrival for j in jobs])
    started = time.perf_counter()
    while any(not j.done for j in jobs):
        if config.max_time is not None and now >= config.max_time:
            break
        active = [j for j in jobs if j.arrival <= now and not j.done]
        if not active:
            upcoming = arrivals[arrivals > now]
            now = math.ceil(float(upcoming.min()) / length) * length
            continue
        tick = time.perf_counter()
        decision = decider.decide(now, active)
        calls.append(time.perf_counter() - tick)
        for job in active:
            held = decision.get(job.name, {})
            job.place(now, type_of[next(iter(held))] if held else None, held)
        running = [job for job in active if job.placement]
        series.append((now, len(active), len(running), sum(job.gpus for job in running)))
        for job in active:
            job.advance(now, length)
        now += length
    wall = time.perf_counter() - started
    frame = pd.DataFrame(series, columns=["time", "active", "running", "gpus_busy"])
    return ElasticResult(decider.name, records(jobs), summary(jobs, calls, wall), calls, frame)


def records(jobs: list[ElasticJob]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "job": [j.name for j in jobs],
            "application": [j.app.name for j in jobs],
            "arrival": [j.arrival for j in jobs],
            "first_start": [np.nan if j.first_start is None else j.first_start for j in jobs],
            "finish": [np.nan if j.finish is None else j.finish for j in jobs],
            "jct": [np.nan if j.finish is None else j.finish - j.arrival for j in jobs],
            "restarts": [max(j.restarts, 0) for j in jobs],
            "gpu_seconds": [j.gpu_seconds for j in jobs],
            "lost_seconds": [j.lost_seconds for j in jobs],
            "progress": [j.progress / float(j.targets[-1]) for j in jobs],
        }
    )


def summary(jobs: list[ElasticJob], calls: list[float], wall: float) -> dict[str, Any]:
    frame = records(jobs)
    jct = frame["jct"].dropna().to_numpy()
    done = frame["finish"].notna()
    seconds = np.array(calls) if calls else np.zeros(1)
    return {
        "jobs": len(jobs),
        "finished": int(done.sum()),
        "jct_mean_hours": float(jct.mean() / 3600) if jct.size else None,
        "jct_p50_hours": float(np.median(jct) / 3600) if jct.size else None,
        "jct_p99_hours": float(np.quantile(jct, 0.99) / 3600) if jct.size else None,
        "makespan_hours": float((frame["finish"].max() - frame["arrival"].min()) / 3600)
        if done.any()
        else None,
        "gpu_hours_per_job": float(frame["gpu_seconds"].mean() / 3600),
        "restarts_per_job": float(frame["restarts"].mean()),
        "policy_calls": len(calls),
        "policy_seconds_p50": float(np.median(seconds)),
        "policy_seconds_p95": float(np.quantile(seconds, 0.95)),
        "wall_seconds": wall,
    }
