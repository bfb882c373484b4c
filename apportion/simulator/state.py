"""Every job of a trace as numpy arrays (one row per job, in trace order), and how time passes.

The engine never walks jobs one by one to move time forward: `advance` charges an interval to
all running jobs at once (progress, completions, GPU time held, time lost to preemption).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from apportion.simulator.trace import Trace
from apportion.solver.arraytypes import BoolArray, FloatArray, IntArray

FUTURE, ACTIVE, DONE, UNSERVABLE = 0, 1, 2, 3
#: A completion this close to the end of an interval counts as inside it (float round-off on
#: steps ÷ throughput must not leave a job one more round with a few nano-steps to go).
EPS = 1e-9


@dataclass
class JobStates:
    """Static trace data and the dynamic state of each job (the replay's; a solve's answer is
    `solver.result.table.JobTable`)."""

    trace: Trace
    types: tuple[str, ...]
    capacity: IntArray  # GPUs per type
    ids: list[str]
    arrival: FloatArray
    scale: IntArray
    total: FloatArray
    weight: FloatArray
    thr: FloatArray  # (jobs, types) whole-job steps/s
    remaining: FloatArray
    state: NDArray[np.int8]
    first_start: FloatArray
    finish: FloatArray
    run_seconds: FloatArray  # wall time holding GPUs
    gpu_seconds: FloatArray  # GPUs × time held (Tiresias's attained service)
    lost_seconds: FloatArray  # time holding GPUs without progress: preemption cost
    delay_left: FloatArray  # preemption cost still to pay before progress resumes
    moves: IntArray
    received: FloatArray  # (jobs, types) seconds held per type, whole run
    since: FloatArray  # (jobs, types) seconds held per type since the allocation was computed
    # ∫ (number of active jobs) dt over each job's life (for FTF ρ), kept as one running
    # integral and each job's value of it when it arrived and when it finished.
    active_time: FloatArray
    cur_type: IntArray  # type running on now, -1 none
    guaranteed: BoolArray  # a deadline admission answer guaranteed the job
    restart_seconds: FloatArray  # a restart's cost per job, NaN: the simulation's default
    broken: BoolArray  # a later answer broke a guarantee an earlier one gave the job
    reasons: dict[int, str] = field(default_factory=dict)
    index: dict[str, int] = field(default_factory=dict)
    # Whole-job throughput by nodes spanned, where the trace measured it (DeepShare); empty
    # for the others, whose throughput does not depend on the spread.
    spread: list[dict[int, float]] = field(default_factory=list)
    coming: IntArray = field(default_factory=lambda: np.zeros(0, np.int64))
    coming_at: FloatArray = field(default_factory=lambda: np.zeros(0))
    coming_times: list[float] = field(default_factory=list)  # `coming_at`, for bisecting
    n_coming: int = 0
    version: int = 0  # bumped whenever the set of active jobs changes
    n_active: int = 0
    integral: float = 0.0  # ∫ (number of active jobs) dt since the start

    @classmethod
    def from_trace(cls, trace: Trace) -> JobStates:
        counts = trace.cluster.gpu_counts
        types = tuple(counts)
        n = len(trace.jobs)
        thr = np.array(
            [[job.throughput.get(k, 0.0) for k in types] for job in trace.jobs], dtype=float
        ).reshape(n, len(types))
        ids = [job.id for job in trace.jobs]
        table = cls(
            trace=trace,
            types=types,
            capacity=np.array([counts[k] for k in types], dtype=np.int64),
            ids=ids,
            arrival=np.array([job.arrival for job in trace.jobs], dtype=float),
            scale=np.array([job.scale_factor for job in trace.jobs], dtype=np.int64),
            total=np.array([job.total_steps for job in trace.jobs], dtype=float),
            weight=np.array([job.weight for job in trace.jobs], dtype=float),
            thr=thr,
            remaining=np.array([job.total_steps for job in trace.jobs], dtype=float),
            state=np.full(n, FUTURE, dtype=np.int8),
            first_start=np.full(n, np.nan),
            finish=np.full(n, np.nan),
            run_seconds=np.zeros(n),
            gpu_seconds=np.zeros(n),
            lost_seconds=np.zeros(n),
            delay_left=np.zeros(n),
            moves=np.zeros(n, dtype=np.int64),
            received=np.zeros((n, len(types))),
            since=np.zeros((n, len(types))),
            active_time=np.zeros(n),
            cur_type=np.full(n, -1, dtype=np.int64),
            guaranteed=np.zeros(n, dtype=bool),
            restart_seconds=np.array(
                [
                    np.nan if job.restart_seconds is None else job.restart_seconds
                    for job in trace.jobs
                ],
                dtype=float,
            ),
            broken=np.zeros(n, dtype=bool),
            index={job_id: j for j, job_id in enumerate(ids)},
            spread=_spreads(trace),
        )
        if len(set(ids)) != n:
            raise ValueError(f"trace {trace.name!r}: job ids are not unique")
        table._mark_unservable()
        return table

    def _mark_unservable(self) -> None:
        """A job with no usable type, or whose gang exceeds every usable type's GPUs, can never
        start: it is reported, and kept out of every snapshot (the policy would give it 0)."""
        usable = (self.thr > 0) & (self.capacity[None, :] >= self.scale[:, None])
        never = ~usable.any(axis=1)
        for j in np.flatnonzero(never):
            runs_on = [k for k, t in zip(self.types, self.thr[j], strict=True) if t > 0]
            self.reasons[int(j)] = (
                f"fits nowhere: {self.scale[j]} GPUs on {', '.join(runs_on)} "
                f"(cluster has {dict(zip(self.types, self.capacity.tolist(), strict=True))})"
                if runs_on
                else "fits nowhere: no GPU type of the cluster can run it"
            )
        self.state[never] = UNSERVABLE
        # Arrivals in time order, for admitting and peeking without scanning every job.
        coming = np.flatnonzero(~never)
        self.coming = coming[np.argsort(self.arrival[coming], kind="stable")]
        self.coming_at = self.arrival[self.coming]
        self.coming_times = self.coming_at.tolist()
        self.n_coming = 0  # how many of `coming` have arrived

    def active(self) -> IntArray:
        return np.flatnonzero(self.state == ACTIVE)

    def admit(self, now: float) -> IntArray:
        """Jobs that have arrived by `now` become active; returns them."""
        upto = bisect_right(self.coming_times, now + EPS)
        if upto <= self.n_coming:
            return np.zeros(0, dtype=np.int64)
        new = np.sort(self.coming[self.n_coming : upto])
        self.n_coming = upto
        self.version += 1
        self.n_active += new.size
        self.state[new] = ACTIVE
        self.active_time[new] = -self.integral  # + the integral when it finishes
        # A job with nothing to do finishes the moment it arrives.
        empty = new[self.remaining[new] <= 0]
        self.n_active -= empty.size
        self.active_time[empty] = 0.0
        self.state[empty] = DONE
        self.finish[empty] = self.arrival[empty]
        self.first_start[empty] = self.arrival[empty]
        return new

    def next_arrival(self) -> float:
        if self.n_coming < self.coming_at.size:
            return self.coming_times[self.n_coming]
        return float(np.inf)

    def unfinished(self) -> bool:
        return self.n_active > 0 or self.n_coming < self.coming_at.size


def _spreads(trace: Trace) -> list[dict[int, float]]:
    spreads = [dict(job.placement_throughput) for job in trace.jobs]
    return spreads if any(spreads) else []


@dataclass
class Running:
    """Who runs during an interval, how fast, and on how many GPUs of which type."""

    jobs: IntArray
    type: IntArray
    gpus: IntArray  # GPUs held (a shared pair's second member holds 0: the GPUs are counted once)
    rate: FloatArray  # steps/s on the GPUs actually held (pair throughput, contention slowdown)

    @classmethod
    def empty(cls) -> Running:
        return cls(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0))


@dataclass
class Step:
    """What an interval did: for the time series and the engine's triggers."""

    start: float
    end: float
    finished: IntArray
    busy: FloatArray  # GPU-seconds held per type
    steps: float  # steps done by all jobs


def advance(table: JobStates, running: Running, start: float, end: float) -> Step:
    """Run `running` from `start` to `end`: each job first pays what is left of its preemption
    cost, then progresses at its rate; a job that completes inside releases its GPUs then."""
    j, rate, kind = running.jobs, running.rate, running.type
    length = end - start
    delay = table.delay_left[j]
    # Without a preemption cost (the default) no job has one to pay: the interval is all work.
    delayed = bool(np.count_nonzero(delay))
    work = np.maximum(length - delay, 0.0) if delayed else max(length, 0.0)
    remaining = table.remaining[j]
    # A job at rate 0 (no throughput where it was put) never completes.
    need = remaining / np.where(rate > 0, rate, 1e-300)
    done = need <= work + EPS * np.maximum(1.0, need)
    if delayed:
        held = np.where(done, np.minimum(delay + need, length), length)
        progress = np.minimum(need, work) * rate
    else:  # the same with no delay: a job runs until it completes or the interval ends
        held = np.minimum(need, work)
        progress = held * rate
    table.remaining[j] = np.where(done, 0.0, remaining - progress)
    # (job, type) entries as flat positions in the (C-ordered) jobs × types tables.
    flat = j * len(table.types) + kind
    table.received.reshape(-1)[flat] += held
    table.since.reshape(-1)[flat] += held
    table.run_seconds[j] += held
    table.gpu_seconds[j] += table.scale[j] * held
    if delayed:
        table.lost_seconds[j] += np.minimum(delay, held)
        table.delay_left[j] = np.maximum(delay - length, 0.0)
    finished = j[done]
    busy: FloatArray = np.bincount(
        kind, weights=running.gpus * held, minlength=len(table.types)
    ).astype(float, copy=False)
    crowd = table.n_active  # the jobs active during the interval (finishing ones included)
    if finished.size:
        table.finish[finished] = start + held[done]
        table.state[finished] = DONE
        table.active_time[finished] += table.integral + crowd * held[done]
        table.version += 1
        table.n_active -= finished.size
    table.integral += crowd * length
    return Step(start, end, finished, busy, float(progress.sum()))


def active_time(table: JobStates) -> FloatArray:
    """∫ (number of active jobs) dt over each job's life so far (0 for jobs not arrived)."""
    out = table.active_time.copy()
    out[table.state == ACTIVE] += table.integral
    return out
