"""Random windows: the same seed draws the same windows, every window lies inside the trace and
keeps all its jobs, and rebasing moves arrivals and deadlines by the window's start."""

from __future__ import annotations

import pickle
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apportion.simulator.sources import TraceSpec
from apportion.simulator.trace import Deadline
from apportion.simulator.traces.tiresias import JOBS_60
from apportion.simulator.windows import Window, cut, draw_windows, pick, windowed
from tests.simulator.helpers import job, trace

# Arrivals out of order on purpose: windows follow arrival order, not the list's.
JOBS = (
    job("c", 100.0, arrival=600.0, deadlines=[Deadline(1500.0, 2.0)]),
    job("a", 100.0, arrival=0.0),
    job("d", 100.0, arrival=900.0),
    job("b", 100.0, arrival=300.0, deadlines=[Deadline(1000.0), Deadline(2000.0, 0.5)]),
    job("e", 100.0, arrival=4000.0),
)
TINY = replace(trace(JOBS), jobs=JOBS)

arrival_lists = st.lists(
    st.floats(min_value=0.0, max_value=1e6, allow_nan=False), min_size=2, max_size=60
)


def test_a_jobs_window_is_rebased_as_worked_out_by_hand() -> None:
    # Jobs 1..3 in arrival order are b (300 s), c (600 s), d (900 s); the window starts at b.
    part = cut(TINY, Window(first=1, stop=4, start=300.0))
    assert [j.id for j in part.jobs] == ["b", "c", "d"]
    assert [j.arrival for j in part.jobs] == [0.0, 300.0, 600.0]
    assert [d.time for d in part.jobs[0].deadlines] == [700.0, 1700.0]
    assert [d.value for d in part.jobs[0].deadlines] == [1.0, 0.5]
    assert [d.time for d in part.jobs[1].deadlines] == [1200.0]
    assert part.cluster == TINY.cluster
    assert part.jobs[1].total_steps == JOBS[0].total_steps


def test_an_hours_window_holds_every_job_in_its_span_and_starts_at_zero() -> None:
    (window,) = draw_windows([j.arrival for j in TINY.jobs], 1, seed=3, hours=0.25)
    part = cut(TINY, window)
    inside = sorted(
        j.arrival for j in TINY.jobs if window.start <= j.arrival < window.start + 900.0
    )
    assert [j.arrival + window.start for j in part.jobs] == pytest.approx(inside)
    assert all(0.0 <= j.arrival < 900.0 for j in part.jobs)


@settings(max_examples=60, derandomize=True, deadline=None)
@given(arrival_lists, st.integers(0, 2**31), st.integers(1, 60))
def test_the_same_seed_draws_the_same_windows_inside_the_trace(
    arrivals: list[float], seed: int, length: int
) -> None:
    length = min(length, len(arrivals))
    first = draw_windows(arrivals, 20, seed, jobs=length)
    assert first == draw_windows(arrivals, 20, seed, jobs=length)
    ordered = sorted(arrivals)
    for w in first:
        assert 0 <= w.first < w.stop <= len(arrivals) and w.jobs == length
        assert w.start == ordered[w.first]


@settings(max_examples=60, derandomize=True, deadline=None)
@given(arrival_lists, st.integers(0, 2**31), st.floats(0.01, 0.99))
def test_an_hours_window_keeps_every_job_arriving_in_it(
    arrivals: list[float], seed: int, share: float
) -> None:
    span = max(arrivals) - min(arrivals)
    if span < 36.0:
        return  # too short a trace for a 0.01 h window
    hours = share * span / 3600
    length, first, latest = hours * 3600, min(arrivals), max(arrivals) - hours * 3600
    if not any(min(a, latest) > max(a - length, first) for a in arrivals):
        with pytest.raises(ValueError, match="hours"):  # only the first start holds a job
            draw_windows(arrivals, 5, seed, hours=hours)
        return
    windows = draw_windows(arrivals, 5, seed, hours=hours)
    assert windows == draw_windows(arrivals, 5, seed, hours=hours)
    ids = list(range(len(arrivals)))
    for w in windows:
        assert min(arrivals) <= w.start <= max(arrivals) - hours * 3600
        kept = pick(ids, arrivals, w)
        expected = [i for i in ids if w.start <= arrivals[i] < w.start + hours * 3600]
        assert sorted(kept) == expected  # none dropped, none added


def test_different_seeds_draw_different_windows() -> None:
    arrivals = [j.arrival for j in TraceSpec("tiresias", str(JOBS_60)).load_trace().jobs]
    one = draw_windows(arrivals, 20, 1, jobs=20)
    two = draw_windows(arrivals, 20, 2, jobs=20)
    assert one != two


def test_a_window_spec_survives_pickling_and_loads_its_window() -> None:
    spec = TraceSpec("tiresias", str(JOBS_60), load=2.0)
    whole = spec.load_trace()
    (window,) = draw_windows([j.arrival for j in whole.jobs], 1, 7, jobs=10)
    loaded = pickle.loads(pickle.dumps(windowed(spec, window))).load_trace()
    expected = sorted(whole.jobs, key=lambda j: j.arrival)[window.first : window.stop]
    assert [j.id for j in loaded.jobs] == [j.id for j in expected]
    assert [j.arrival for j in loaded.jobs] == [j.arrival - window.start for j in expected]
    assert loaded.jobs[0].arrival == 0.0


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"jobs": 6}, "jobs"),
        ({"jobs": 0}, "jobs"),
        ({"hours": 2.0}, "hours"),
        ({}, "window"),
        ({"jobs": 2, "hours": 0.1}, "window"),
    ],
)
def test_a_window_that_cannot_be_drawn_is_refused_by_name(
    kwargs: dict[str, float], field: str
) -> None:
    with pytest.raises(ValueError, match=field):
        draw_windows([j.arrival for j in TINY.jobs], 3, 0, **kwargs)  # type: ignore[arg-type]
