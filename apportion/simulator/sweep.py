"""Sweeps: many (policy, trace, seed, load) runs described once, run on any executor.

    spec = SweepSpec(policies=("max_min_fairness", "max_min_agnostic"),
                     traces=(TraceSpec("poisson", jobs=200),), seeds=(0, 1), loads=(2.0, 4.0))
    result = run_sweep(spec)                         # a local process pool
    result = run_sweep(spec, client.get_executor())  # a Dask cluster (distributed.Client)
    with ray_executor() as pool:                     # Ray (`executors`): local, or RAY_ADDRESS
        result = run_sweep(spec, pool)

Each run is a small picklable `RunSpec`; the worker reads or generates its own trace (nothing
large is shipped) and sends back its `SimulationResult`. Any `concurrent.futures.Executor`
works: a `ProcessPoolExecutor` (the default, one worker per core), a Dask client's
`get_executor()` (tested with a `LocalCluster`), or `executors.RayExecutor`, which runs each
run as a Ray task (tested with a local Ray). The engine is deterministic, so the same spec
gives the same records on every executor.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field, replace
from itertools import product
from typing import Any

import pandas as pd

from apportion.simulator.config import SimConfig
from apportion.simulator.result import SimulationResult
from apportion.simulator.sources import TraceSpec

Policy = str | tuple[str, Mapping[str, Any]]

#: How often a sweep looks for runs that have started (for `on_start`).
POLL_SECONDS = 0.5


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
    on_start: Callable[[RunSpec], None] | None = None,
) -> SweepResult:
    """Run every run of `spec` on `executor` (default: `default_executor(workers)`, shut down
    afterwards); `on_start` is called as each run is handed to a worker (its future is running:
    a process pool hands over at most one run more than it has workers) and `on_done` as each
    finishes (progress bars). Results keep the spec's order whatever order the runs finish
    in."""
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
        pending = set(futures)
        seen: set[Future[SimulationResult]] = set()
        while pending:
            finished, pending = wait(pending, timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)
            if on_start is not None:
                for future in sorted(futures.keys() - seen, key=futures.__getitem__):
                    if future.running() or future.done():
                        seen.add(future)
                        on_start(runs[futures[future]])
            for future in sorted(finished, key=futures.__getitem__):
                i = futures[future]
                result = results[i] = future.result()
                if on_done is not None:
                    on_done(runs[i], result)
    finally:
        if owned:
            pool.shutdown(cancel_futures=True)
    done = [r for r in results if r is not None]
    return SweepResult(runs, done, time.perf_counter() - started)
