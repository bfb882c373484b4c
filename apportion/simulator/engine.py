"""The discrete-event replay of a trace under a policy.

Time jumps from decision point to decision point: a round or lease boundary, or, event-driven,
also the next arrival or completion and the time the policy's last answer said it would go stale
(`revisit_after`: a queue demotion or promotion). Placement and schedule enactment are
event-driven by nature; `SimConfig.events` makes any enactment so. At each point the jobs that
have arrived join, the policy is re-solved if a trigger fired (`SimConfig.resolve`; a stale
answer always is), the enactor says who runs where and how fast, and `simulator.state.advance`
charges the interval to every running job at once (completions inside it included). When nothing
is active the clock jumps to the next arrival; when nothing can ever run again (no arrivals left,
the policy runs nobody) the run stops and says why.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from apportion.simulator.baselines import ALIASES, KEYS
from apportion.simulator.clients import Decider, Reply, Request
from apportion.simulator.config import SimConfig
from apportion.simulator.enact import Enactor, make_enactor, policy_options
from apportion.simulator.policies import NODE_BASELINES, canonical, make_decider
from apportion.simulator.result import SimulationResult, build_result
from apportion.simulator.series import Series
from apportion.simulator.state import DONE, EPS, JobStates, Running, advance
from apportion.simulator.trace import Trace

#: Called after every interval with (jobs finished so far, simulated time).
Progress = Callable[[int, float], None]


class Engine:
    def __init__(self, trace: Trace, config: SimConfig, progress: Progress | None = None) -> None:
        # A foreign policy name read as ours, with its options; the trace's placement rules obeyed.
        config = canonical(config).for_rules(trace.name, trace.rules is not None)
        self.config = config
        self.table = JobStates.from_trace(trace)
        # Heuristics of their own, with options of their own (none of the solver's).
        baseline = config.policy in (*KEYS, *ALIASES, *NODE_BASELINES)
        options = policy_options(config, baseline, self.table)
        self.decider = Watched(make_decider(config.policy, options, config.http))
        self.enactor: Enactor = make_enactor(self.table, self.decider, config)
        self.resolve = config.resolve_for(self.decider.baseline)
        self.event_driven = self.enactor.event_driven or config.events
        self.boundaries = 0  # decision points that were the enactor's own (events mode)
        self.at_boundary = False
        self.progress = progress
        self.series = Series()
        self.decisions = 0
        self.last_solve = -np.inf
        self.arrived = self.completed = self.force = False
        self.idle = 0
        self.stopped = ""

    def run(self) -> SimulationResult:
        started, started_cpu = time.perf_counter(), time.process_time()
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
        return build_result(
            table, self.config, self.series, self.enactor.calls, started, now, started_cpu
        )

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
        solve = self._should_solve(now)
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

    def _should_solve(self, now: float) -> bool:
        resolve = self.resolve
        if self.event_driven:
            # Every N of the enactor's own boundaries (a round, a lease) that no event cut
            # short; an enactor that is event-driven by nature spaces them itself.
            periodic = self._periodic_boundary(resolve.every)
        else:
            periodic = resolve.every is not None and self.decisions % resolve.every == 0
        events = (resolve.arrivals and self.arrived) or (resolve.completions and self.completed)
        if resolve.interval is not None and now - self.last_solve < resolve.interval - EPS:
            events = False  # pending until the interval has passed
        solve = (
            self.enactor.asks_every_decision
            or self.decisions == 0
            or self.force
            or periodic
            or events
        )
        self.decisions += 1
        if solve:
            self.arrived = self.completed = self.force = False
            self.last_solve = now
        return solve

    def _periodic_boundary(self, every: int | None) -> bool:
        if every is None or not self.at_boundary:
            return False
        if self.enactor.event_driven:
            return True
        self.boundaries += 1  # the first decision, at 0, is the 0th
        return self.boundaries % every == 0

    def _end(self, now: float, running: Running, solved: bool) -> float | None:
        """When this decision expires: its round or lease, or event-driven the next arrival,
        completion or stale answer, if sooner. An idle cluster waits for the next arrival,
        unless the enactor asks for patience (under leases admission depends on time: a
        reserved slot may come later)."""
        table = self.table
        end = self.enactor.length(now)
        upcoming = table.next_arrival()
        if self.event_driven:
            if np.isfinite(end) and self.enactor.event_driven:
                self.force = True  # the periodic re-solve in placement mode
            boundary = end
            stale = self.decider.stale_at if self.decider.stale_at > now + EPS else np.inf
            end = min(end, upcoming, _first_completion(table, running, now), stale)
            self.at_boundary = end >= boundary
            if stale <= end:
                self.force = True  # the answer's queues change: ask again
        if self.config.max_time is not None:
            end = min(end, self.config.max_time)
        if running.jobs.size:
            self.idle = 0
            return end
        if not solved:  # nothing runs on a stale decision: ask the policy again first
            self.force = True
            return now
        self.idle += 1
        if self.idle <= self.enactor.idle_patience:
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


class Watched:
    """The simulated policy, noting when its last answer said it goes stale (`stale_at`:
    `revisit_after` seconds after the decision point; never, without one)."""

    def __init__(self, decider: Decider) -> None:
        self.decider = decider
        self.name = decider.name
        self.baseline = decider.baseline
        self.stale_at = np.inf

    def decide(self, request: Request) -> Reply:
        cpu = time.process_time()
        answer = self.decider.decide(request)
        answer.cpu_seconds = time.process_time() - cpu
        if answer.usable:
            after = answer.revisit_after
            self.stale_at = np.inf if after is None else request.now + after
        return answer

    def close(self) -> None:
        self.decider.close()


def _first_completion(table: JobStates, running: Running, now: float) -> float:
    if not running.jobs.size:
        return np.inf
    j = running.jobs
    with np.errstate(divide="ignore"):
        need = np.where(running.rate > 0, table.remaining[j] / running.rate, np.inf)
    return float(now + (table.delay_left[j] + need).min())


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
