"""Sweeps: many (policy, trace, seed, load) runs described once, run on any executor.

    spec = SweepSpec(policies=("max_min_fairness", "max_min_agnostic"),
                     traces=(TraceSpec("poisson", jobs=200),), seeds=(0, 1), loads=(2.0, 4.0))
    result = run_sweep(spec)                         # a local process pool
    result = run_sweep(spec, client.get_executor())  # a Dask cluster (distributed.Client)

Each run is a small picklable `RunSpec`; the worker reads or generates its own trace (nothing
large is shipped) and sends back its `SimulationResult`. Any `concurrent.futures.Executor`
works: a `ProcessPoolExecutor` (the default, one worker per core), a Dask client's
`get_executor()` (tested with a `LocalCluster`), or any adapter that submits to Ray and returns
`concurrent.futures.Future`s. The engine is deterministic, so the same spec gives the same
records on every executor.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from itertools import product
from typing import Any

import pandas as pd

from apportion.simulator.config import SimConfig
from apportion.simulator.result import SimulationResult
from apportion.simulator.sources import TraceSpec

Policy = str | tuple[str, Mapping[str, Any]]


@dataclass(frozen=True)
class RunSpec:
    """One run of a sweep."""

    config: SimConfig
    trace: TraceSpec
    seed: int
    load: float | None

    def labels(self) -> dict[str, Any]:
        return {
            "policy": self.config.policy,
            "trace": self.trace.label(),
            "seed": self.seed,
            "load": self.load,
        }


@dataclass(frozen=True)
class SweepSpec:
    """The cross product policies × traces × seeds × loads, each run with `config` (its policy
    and seed replaced). A policy may carry its own options: `("water_filling", {...})`."""

    policies: tuple[Policy, ...]
    traces: tuple[TraceSpec, ...]
    seeds: tuple[int, ...] = (0,)
    loads: tuple[float | None, ...] = (None,)
    config: SimConfig = field(default_factory=SimConfig)

    def runs(self) -> list[RunSpec]:
        out = []
        for policy, trace, seed, load in product(
            self.policies, self.traces, self.seeds, self.loads
        ):
            name, options = (policy, {}) if isinstance(policy, str) else policy
            config = replace(
                self.config,
                policy=name,
                options={**self.config.options, **options},
                seed=seed,
            )
            chosen = trace.load if load is None else load  # None on the axis: the trace's own
            out.append(RunSpec(config, replace(trace, seed=seed, load=chosen), seed, chosen))
        return out


class RunFailed(RuntimeError):
    """A run of a sweep failed; says which, with the original error as one line (the original
    exception may not survive the trip back from a worker process)."""


def run_one(run: RunSpec) -> SimulationResult:
    """A worker's job: read the trace, simulate, return the result (a module-level function,
    so every executor can pickle it)."""
    from apportion.simulator.engine import simulate

    try:
        return simulate(run.trace.load_trace(), run.config)
    except Exception as exc:
        labels = ", ".join(f"{k}={v}" for k, v in run.labels().items())
        detail = " ".join(str(exc).split())
        raise RunFailed(f"run {labels}: {type(exc).__name__}: {detail}") from None


@dataclass
class SweepResult:
    runs: list[RunSpec]
    results: list[SimulationResult]
    wall_seconds: float = 0.0

    def summary(self) -> pd.DataFrame:
        """One row per run: its labels and its summary."""
        rows = [
            {**run.labels(), **result.summary}
            for run, result in zip(self.runs, self.results, strict=True)
        ]
        return pd.DataFrame(rows)

    def records(self) -> pd.DataFrame:
        """Every run's per-job records, with the run's labels as leading columns."""
        frames = []
        for run, result in zip(self.runs, self.results, strict=True):
            frame = result.records.copy()
            for position, (name, value) in enumerate(run.labels().items()):
                frame.insert(position, name, value)
            frames.append(frame)
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def default_executor(workers: int | None = None) -> ProcessPoolExecutor:
    """A process per core; spawned, not forked, so no solver thread of this process is
    copied half-way through a solve."""
    count = workers or os.cpu_count() or 1
    return ProcessPoolExecutor(max_workers=count, mp_context=multiprocessing.get_context("spawn"))


def run_sweep(
    spec: SweepSpec | Iterable[RunSpec],
    executor: Executor | None = None,
    *,
    workers: int | None = None,
    on_done: Callable[[RunSpec, SimulationResult], None] | None = None,
) -> SweepResult:
    """Run every run of `spec` on `executor` (default: `default_executor(workers)`, shut down
    afterwards); `on_done` is called as each finishes (progress bars). Results keep the spec's
    order whatever order the runs finish in."""
    import time

    runs = spec.runs() if isinstance(spec, SweepSpec) else list(spec)
    started = time.perf_counter()
    owned = executor is None
    pool = default_executor(workers) if executor is None else executor
    try:
        futures: dict[Future[SimulationResult], int] = {
            pool.submit(run_one, run): i for i, run in enumerate(runs)
        }
        results: list[SimulationResult | None] = [None] * len(runs)
        for future in as_completed(futures):
            i = futures[future]
            results[i] = future.result()
            if on_done is not None:
                on_done(runs[i], future.result())
    finally:
        if owned:
            pool.shutdown(cancel_futures=True)
    done = [r for r in results if r is not None]
    return SweepResult(runs, done, time.perf_counter() - started)
