"""The discrete-event replay of a trace under a policy.

Time jumps from decision point to decision point: a round or lease boundary, or in placement
mode the next arrival or completion. At each point the jobs that have arrived join, the policy is
re-solved if a trigger fired (`SimConfig.resolve`), the enactor says who runs where and how fast,
and `simulator.state.advance` charges the interval to every running job at once (completions
inside it included). When nothing is active the clock jumps to the next arrival; when nothing can
ever run again (no arrivals left, the policy runs nobody) the run stops and says why.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from apportion.simulator.baselines import ALIASES, KEYS
from apportion.simulator.config import Mode, SimConfig
from apportion.simulator.enact import Enactor, make_enactor
from apportion.simulator.policies import make_decider
from apportion.simulator.result import SimulationResult, build_result
from apportion.simulator.state import (
    DONE,
    EPS,
    FloatArray,
    IntArray,
    JobTable,
    Running,
    Step,
    advance,
)
from apportion.simulator.trace import Trace

#: Leases an idle cluster waits for a guaranteed job's reserved slot before giving up (the
#: admission policy's default planning horizon).
MAX_IDLE_LEASES = 288
#: Called after every interval with (jobs finished so far, simulated time).
Progress = Callable[[int, float], None]


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


class Engine:
    def __init__(self, trace: Trace, config: SimConfig, progress: Progress | None = None) -> None:
        self.config = config
        self.table = JobTable.from_trace(trace)
        self.decider = make_decider(config.policy, _options(config), config.http)
        self.enactor: Enactor = make_enactor(self.table, self.decider, config)
        self.resolve = config.resolve_for(self.decider.baseline)
        self.event_driven = config.enactment == Mode.PLACEMENT
        self.progress = progress
        self.series = Series()
        self.decisions = 0
        self.arrived = self.completed = self.force = False
        self.idle = 0
        self.stopped = ""

    def run(self) -> SimulationResult:
        started = time.perf_counter()
        table = self.table
        now = float(table.arrival.min()) if table.arrival.size else 0.0
        try:
            next_time: float | None = now
            while next_time is not None:
                now = next_time
                next_time = self._step(now)
        finally:
            self.decider.close()
        self._explain_unfinished(now)
        return build_result(table, self.config, self.series, self.enactor.calls, started, now)

    def _step(self, now: float) -> float | None:
        """One decision point and the interval after it; the next decision time, or None."""
        table = self.table
        limit = self.config.max_time
        if not table.unfinished():
            return None
        if limit is not None and now >= limit - EPS:
            self.stopped = f"stopped at max_time {limit:g} s"
            return None
        if table.admit(now).size:
            self.arrived = True
        if not table.n_active:
            upcoming = table.next_arrival()
            return upcoming if np.isfinite(upcoming) else None
        solve = self._should_solve()
        running = self.enactor.decide(now, solve)
        end = self._end(now, running, solve)
        if end is None:
            return None
        before = table.remaining[running.jobs] if self.config.job_series else None
        step = advance(table, running, now, end)
        self.enactor.after(step, running)
        self.series.add(step, running, table.n_active + int(step.finished.size))
        if before is not None:
            self.series.add_jobs(running, before - table.remaining[running.jobs])
        self.completed = self.completed or bool(step.finished.size)
        if self.progress is not None:
            self.progress(int((table.state == DONE).sum()), end)
        return end

    def _should_solve(self) -> bool:
        resolve = self.resolve
        periodic = (
            not self.event_driven
            and resolve.every is not None
            and self.decisions % resolve.every == 0
        )
        solve = (
            self.config.enactment == Mode.LEASES  # admission looks again at every lease
            or self.decisions == 0
            or self.force
            or periodic
            or (resolve.arrivals and self.arrived)
            or (resolve.completions and self.completed)
        )
        self.decisions += 1
        if solve:
            self.arrived = self.completed = self.force = False
        return solve

    def _end(self, now: float, running: Running, solved: bool) -> float | None:
        """When this decision expires: its round or lease, or in placement mode the next
        arrival or completion. An idle cluster waits for the next arrival, except under leases,
        where admission depends on time (a reserved slot may come later)."""
        table = self.table
        end = self.enactor.length(now)
        upcoming = table.next_arrival()
        if self.event_driven:
            if np.isfinite(end):
                self.force = True  # the periodic re-solve in placement mode
            end = min(end, upcoming, _first_completion(table, running, now))
        if self.config.max_time is not None:
            end = min(end, self.config.max_time)
        if running.jobs.size:
            self.idle = 0
            return end
        if not solved:  # nothing runs on a stale decision: ask the policy again first
            self.force = True
            return now
        self.idle += 1
        if self.config.enactment == Mode.LEASES and self.idle <= MAX_IDLE_LEASES:
            return end
        if np.isfinite(upcoming):
            return max(upcoming, now)
        self.stopped = "the policy runs none of the remaining jobs and none will arrive"
        return None

    def _explain_unfinished(self, now: float) -> None:
        table = self.table
        for j in table.active().tolist():
            if j in table.reasons:
                continue
            never = np.isnan(table.first_start[j])
            what = "never started" if never else "unfinished"
            table.reasons[j] = f"{what}: {self.stopped or 'the run ended'} (t = {now:g} s)"


def _first_completion(table: JobTable, running: Running, now: float) -> float:
    if not running.jobs.size:
        return np.inf
    j = running.jobs
    with np.errstate(divide="ignore"):
        need = np.where(running.rate > 0, table.remaining[j] / running.rate, np.inf)
    return float(now + (table.delay_left[j] + need).min())


def _options(config: SimConfig) -> dict[str, object]:
    """A lease policy estimates its leases with the checkpoint cost the simulation charges."""
    options = dict(config.options)
    baseline = config.policy in KEYS or config.policy in ALIASES
    if config.enactment == Mode.LEASES and "overhead_seconds" not in options and not baseline:
        options["overhead_seconds"] = config.preemption_seconds
    return options


def simulate(
    trace: Trace,
    config: SimConfig | None = None,
    progress: Progress | None = None,
    **settings: object,
) -> SimulationResult:
    """Replay `trace` under `config` (or `SimConfig(**settings)`); see `SimulationResult`."""
    chosen = config if config is not None else SimConfig(**settings)  # type: ignore[arg-type]
    if config is not None and settings:
        chosen = replace(config, **settings)  # type: ignore[arg-type]
    return Engine(trace, chosen, progress).run()
