"""The time series of a run: one row per interval between decision points, and with
`SimConfig.job_series` the running jobs of each interval."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from apportion.simulator.state import Running, Step
from apportion.solver.arraytypes import FloatArray, IntArray


@dataclass
class Series:
    """One row per interval: the time series of the run."""

    start: list[float] = field(default_factory=list)
    end: list[float] = field(default_factory=list)
    busy: list[np.ndarray] = field(default_factory=list)  # GPU-seconds per type
    running: list[int] = field(default_factory=list)
    active: list[int] = field(default_factory=list)
    finished: list[int] = field(default_factory=list)
    steps: list[float] = field(default_factory=list)
    # With `SimConfig.job_series`: per interval, the running jobs, their type, GPUs and steps.
    jobs: list[tuple[IntArray, IntArray, IntArray, FloatArray]] = field(default_factory=list)

    def add(self, step: Step, running: Running, active: int) -> None:
        self.start.append(step.start)
        self.end.append(step.end)
        self.busy.append(step.busy)
        self.running.append(int(running.jobs.size))
        self.active.append(active)
        self.finished.append(int(step.finished.size))
        self.steps.append(step.steps)

    def add_jobs(self, running: Running, steps: FloatArray) -> None:
        self.jobs.append((running.jobs, running.type, running.gpus, steps))
