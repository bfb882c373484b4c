"""HiGHS's task scheduler is one per process: a change of `threads` between solves (or between
threads of the caller) must still give every answer (solver/backends/highs.py, `Scheduler`)."""

from __future__ import annotations

import dataclasses
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import highspy
import numpy as np
import pytest

from apportion.solver import solve
from apportion.solver.backends import SolveSettings, get_backend
from apportion.solver.backends.highs import SCHEDULER, to_highs_lp
from apportion.solver.model import CompiledModel, Model, Sense
from apportion.solver.options import MAX_THREADS
from apportion.solver.status import Status
from tests.conftest import load_fixture
from tests.solver.backends.hard_models import market_split

SEQUENCE = [1, 2, None, 1, 2, 2, None]


def small_lp() -> CompiledModel:
    m = Model("lp")
    x = m.add_variables("x", 3, upper=1.0)
    m.add_constraints("cap", {x: np.array([[1.0, 2.0, 3.0]])}, upper=np.array([2.0]))
    m.set_objective({x: np.array([1.0, 3.0, 2.0])}, Sense.MAXIMIZE)
    return m.compile()


def test_solves_with_other_thread_counts_in_one_process_are_all_optimal() -> None:
    # Before: threads=1 then 2 ended "error", detail "Not Set".
    snapshot = load_fixture("gavel_physical_96.json")
    counts = [t for t in (1, 2, None, 1) if t is None or t <= MAX_THREADS]
    for threads in counts:
        options = {"backend": "highs"} | ({"threads": threads} if threads else {})
        result = solve(snapshot, options=options)
        assert result.status == "optimal", (threads, result.solver.detail)


@pytest.mark.parametrize("kind", ["lp", "milp"])
def test_the_backend_answers_whatever_the_previous_count(kind: str) -> None:
    model = small_lp() if kind == "lp" else market_split(3, 12)
    backend = get_backend("highs")
    for threads in SEQUENCE:
        solution = backend.solve(model, SolveSettings(threads=threads, time_limit=20))
        assert solution.status is Status.OPTIMAL, (threads, solution.detail)


def test_sessions_and_pulp_highs_go_through_the_same_guard() -> None:
    model = small_lp()
    for threads in SEQUENCE:
        session = get_backend("highs").session(model, SolveSettings(threads=threads))
        assert session.solve().status is Status.OPTIMAL, threads
        settings = SolveSettings(threads=threads, solver="HiGHS")
        assert get_backend("pulp").solve(model, settings).status is Status.OPTIMAL, threads


def test_a_scheduler_resized_outside_the_guard_is_resized_back() -> None:
    model = small_lp()
    get_backend("highs").solve(model, SolveSettings(threads=1))
    foreign = highspy.Highs()
    foreign.setOptionValue("output_flag", False)
    foreign.setOptionValue("threads", 2)
    foreign.passModel(to_highs_lp(model))
    highspy.Highs.resetGlobalScheduler(True)
    foreign.run()  # another library in the process, sizing the scheduler for 2
    assert foreign.getModelStatus() == highspy.HighsModelStatus.kOptimal
    assert get_backend("highs").solve(model, SolveSettings(threads=1)).status is Status.OPTIMAL


def test_runs_of_different_sizes_from_several_threads() -> None:
    model = small_lp()

    def run(threads: int | None) -> Status:
        return get_backend("highs").solve(model, SolveSettings(threads=threads)).status

    with ThreadPoolExecutor(max_workers=4) as pool:
        statuses = list(pool.map(run, SEQUENCE * 6))
    assert statuses == [Status.OPTIMAL] * len(statuses)


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads in /proc")
def test_changes_do_not_leave_worker_threads_behind() -> None:
    model = small_lp()
    backend = get_backend("highs")
    backend.solve(model, SolveSettings(threads=1))
    before = len(os.listdir("/proc/self/task"))
    for threads in SEQUENCE * 5:
        backend.solve(model, SolveSettings(threads=threads))
    backend.solve(model, SolveSettings(threads=1))
    assert len(os.listdir("/proc/self/task")) <= before


def test_an_answer_with_a_non_finite_objective_is_no_answer() -> None:
    model = dataclasses.replace(small_lp(), offset=float("inf"))
    for name, solver in (("highs", None), ("pulp", "CBC")):
        solution = get_backend(name).solve(model, SolveSettings(solver=solver))
        assert solution.status is Status.ERROR and solution.objective is None, solution.detail


def test_a_solve_inside_a_callback_does_not_wait_for_its_own_run() -> None:
    inner: list[Status] = []

    def on_incumbent(x: np.ndarray, bound: float) -> bool:
        inner.append(get_backend("highs").solve(small_lp(), SolveSettings(threads=2)).status)
        return True

    settings = SolveSettings(threads=1, on_incumbent=on_incumbent, time_limit=20)
    worker = threading.Thread(
        target=lambda: get_backend("highs").solve(market_split(3, 12), settings), daemon=True
    )
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "the nested run waited for the run it was called from"
    assert inner


def test_other_libraries_can_hold_the_size_they_run_at() -> None:
    # cvxpy's HIGHS calls highspy itself: it can run inside `SCHEDULER.sized`.
    model = small_lp()
    for threads in SEQUENCE:
        get_backend("highs").solve(model, SolveSettings(threads=1))
        foreign = highspy.Highs()
        foreign.setOptionValue("output_flag", False)
        if threads is not None:
            foreign.setOptionValue("threads", threads)
        foreign.passModel(to_highs_lp(model))
        with SCHEDULER.sized(threads):
            foreign.run()
        assert foreign.getModelStatus() == highspy.HighsModelStatus.kOptimal, threads
