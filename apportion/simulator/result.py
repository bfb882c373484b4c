"""A simulation's outcome: per-job records, the time series, the policy calls and a summary."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from apportion.simulator import metrics
from apportion.simulator.config import SimConfig
from apportion.simulator.state import JobStates

if TYPE_CHECKING:
    from apportion.simulator.enact.common import CallLog
    from apportion.simulator.series import Series


@dataclass
class SimulationResult:
    """What one run measured (picklable: sweeps send it back from worker processes).

    - records: one row per job (arrival, start, finish, JCT, queueing delay, GPU time held and
      received per type, moves and time lost to them, FTF ρ, deadline met and value, reason
      for a job that never finished)
    - timeseries: one row per interval (running, active and waiting jobs, GPU-seconds held and
      utilization per type, steps done)
    - calls: one row per policy call (time, seconds, the policy's own seconds, jobs, status)
    - summary: the run in one dict (see `simulator.metrics.summarize`), with `wall_seconds`
      and `simulator_seconds` (wall time less policy calls)
    - job_series: with `SimConfig.job_series`, one row per running job per interval (start,
      end, job, GPU type, GPUs held, steps made); empty otherwise
    """

    trace: str
    config: dict[str, Any]
    records: pd.DataFrame
    timeseries: pd.DataFrame
    calls: pd.DataFrame
    summary: dict[str, Any]
    job_series: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def wall_seconds(self) -> float:
        return float(self.summary["wall_seconds"])

    def save(self, records: Path | None = None, timeseries: Path | None = None) -> None:
        if records is not None:
            self.records.to_csv(records, index=False)
        if timeseries is not None:
            self.timeseries.to_csv(timeseries, index=False)


def build_result(
    table: JobStates,
    config: SimConfig,
    series: Series,
    calls: CallLog,
    started: float,
    end: float,
    started_cpu: float | None = None,
) -> SimulationResult:
    """The result of a run that began at `started` (`time.perf_counter()`; `started_cpu`,
    `time.process_time()`) and stopped at simulated time `end`; its wall and CPU times include
    building these tables."""
    jobs = metrics.records(table)
    steps = metrics.timeseries(series, table)
    called = metrics.calls_frame(calls)
    per_job = metrics.job_series(series, table)
    summary = metrics.summarize(table, jobs, steps, called)
    summary["end_time"] = end
    summary["dropped_rows"] = sum(table.trace.dropped.values())  # left out by the reader
    wall_seconds = time.perf_counter() - started
    summary["wall_seconds"] = wall_seconds
    summary["simulator_seconds"] = wall_seconds - summary["policy_seconds"]
    summary["mechanism_seconds"] = calls.mechanism_seconds
    if started_cpu is not None:
        # The simulator's own share by CPU time: on a shared machine the wall clock also counts
        # the time other processes ran, and that lands on whichever side was waiting.
        cpu = time.process_time() - started_cpu
        summary["cpu_seconds"] = cpu
        summary["simulator_cpu_share"] = (cpu - summary["policy_cpu_seconds"]) / cpu if cpu else 0.0
    summary.update(calls.notes)
    return SimulationResult(
        trace=table.trace.name,
        config=config.describe(),
        records=jobs,
        timeseries=steps,
        calls=called,
        summary=summary,
        job_series=per_job,
    )
