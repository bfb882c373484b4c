"""Random windows of a trace: studies that judge a policy on stretches of a workload drawn by a
fixed seed, not on the one stretch it was tuned on.

    windows = draw_windows([j.arrival for j in trace.jobs], 20, SEED, jobs=60)
    parts = [cut(trace, w) for w in windows]        # each rebased to start at 0
    specs = [windowed(spec, w) for w in windows]    # a sweep's picklable form

A window is a run of consecutive jobs in arrival order: `jobs=n` takes n jobs from a start
index drawn uniformly among those that leave n jobs; `hours=h` takes every job arriving in
[s, s + h·3600) from a start time s drawn uniformly among those in [first arrival, last
arrival − h·3600] whose window holds a job (as drawing again until one does, without the
loop). The window's jobs are kept whole, none dropped, and rebased: arrival (and every
deadline) less s, so a window starts at time 0 as a trace does. One
`numpy.random.default_rng(seed)` draws every start in turn: the same seed gives the same
windows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

import numpy as np

from apportion.simulator.sources import TraceSpec
from apportion.simulator.trace import Trace, TraceJob

T = TypeVar("T")


@dataclass(frozen=True)
class Window:
    """Jobs `first` to `stop` (exclusive) in arrival order, rebased by `start` seconds."""

    first: int
    stop: int
    start: float

    @property
    def jobs(self) -> int:
        return self.stop - self.first


def _order(arrivals: Sequence[float]) -> np.ndarray:
    # Stable, so jobs arriving together keep the trace's order.
    return np.argsort(np.asarray(arrivals, dtype=float), kind="stable")


def draw_windows(
    arrivals: Sequence[float],
    count: int,
    seed: int,
    *,
    jobs: int | None = None,
    hours: float | None = None,
) -> list[Window]:
    """`count` windows of `jobs` jobs or `hours` hours of the arrivals, started at random by
    `seed`; raises ValueError naming the argument that cannot be met."""
    if (jobs is None) == (hours is None):
        raise ValueError("window: give its length in jobs or in hours, not both or neither")
    if count < 1:
        raise ValueError(f"count must be at least 1, got {count}")
    times = np.sort(np.asarray(arrivals, dtype=float), kind="stable")
    if times.size == 0:
        raise ValueError("arrivals: a window needs a trace with jobs")
    rng = np.random.default_rng(seed)
    if jobs is not None:
        if not 1 <= jobs <= times.size:
            raise ValueError(f"jobs must be between 1 and the trace's {times.size}, got {jobs}")
        firsts = rng.integers(0, times.size - jobs + 1, size=count)
        return [Window(int(i), int(i) + jobs, float(times[i])) for i in firsts]
    assert hours is not None
    length = hours * 3600.0
    span = float(times[-1] - times[0])
    if not 0 < length <= span:
        raise ValueError(f"hours must be positive and at most the trace's {span / 3600:g} h")
    low, high = _nonempty_starts(times, length)
    widths = np.cumsum(high - low)
    out = []
    for u in rng.uniform(0.0, float(widths[-1]), size=count):
        k = min(int(np.searchsorted(widths, u, side="right")), widths.size - 1)
        start = float(high[k] - (widths[k] - u))
        first = int(np.searchsorted(times, start, side="left"))
        stop = int(np.searchsorted(times, start + length, side="left"))
        out.append(Window(first, stop, start))
    return out


def _nonempty_starts(times: np.ndarray, length: float) -> tuple[np.ndarray, np.ndarray]:
    """The starts s in [first, last − length] whose window [s, s + length) holds an arrival,
    as disjoint intervals (low, high]: arrival a is in it when a − length < s ≤ a."""
    latest = float(times[-1] - length)
    low = np.maximum(times - length, float(times[0]))
    high = np.minimum(times, latest)
    keep = high > low
    if not keep.any():
        raise ValueError(f"hours: no {length / 3600:g}-hour window but the first holds a job")
    low, high = low[keep], high[keep]
    merged_low, merged_high = [float(low[0])], [float(high[0])]
    for a, b in zip(low[1:], high[1:], strict=True):
        if a <= merged_high[-1]:
            merged_high[-1] = max(merged_high[-1], float(b))
        else:
            merged_low.append(float(a))
            merged_high.append(float(b))
    return np.asarray(merged_low), np.asarray(merged_high)


def pick(items: Sequence[T], arrivals: Sequence[float], window: Window) -> list[T]:
    """The window's items (any kind of job, `arrivals` theirs) in arrival order, not rebased."""
    if len(items) != len(arrivals):
        raise ValueError(f"arrivals: {len(arrivals)} for {len(items)} jobs")
    if not 0 <= window.first < window.stop <= len(items):
        raise ValueError(f"window: jobs {window.first}–{window.stop} of a {len(items)}-job trace")
    return [items[i] for i in _order(arrivals)[window.first : window.stop]]


def window_jobs(jobs: Sequence[TraceJob], window: Window) -> tuple[TraceJob, ...]:
    """The window's jobs in arrival order, their arrivals and deadlines less `window.start`."""
    chosen = pick(jobs, [j.arrival for j in jobs], window)
    shift = window.start
    return tuple(
        replace(
            job,
            arrival=job.arrival - shift,
            deadlines=tuple(replace(d, time=d.time - shift) for d in job.deadlines),
        )
        for job in chosen
    )


def cut(trace: Trace, window: Window) -> Trace:
    """The trace's window: its jobs rebased, the same cluster and rules."""
    name = f"{trace.name}[{window.first}:{window.stop}]@{window.start:g}s"
    return replace(trace, jobs=window_jobs(trace.jobs, window), name=name)


@dataclass(frozen=True)
class WindowSpec(TraceSpec):
    """A `TraceSpec` whose trace (as read, cut to `jobs` and scaled by `load`) is cut to
    `window`: what a sweep's worker loads for one window."""

    window: Window | None = None

    def label(self) -> str:
        base = super().label()
        return base if self.window is None else f"{base}[{self.window.first}:{self.window.stop}]"

    def load_trace(self) -> Trace:
        trace = super().load_trace()
        return trace if self.window is None else cut(trace, self.window)


def windowed(spec: TraceSpec, window: Window) -> WindowSpec:
    """`spec` with `window` applied after it is read."""
    fields = {name: getattr(spec, name) for name in spec.__dataclass_fields__}
    return WindowSpec(**fields, window=window)
