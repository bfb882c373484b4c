"""PuLP's solvers get what is left of the time limit when they start, not all of it again after
PuLP has built its objects and written the model (solver/backends/pulp_backend.py, `_Until`)."""

from __future__ import annotations

import subprocess
import time
from typing import Any

import pulp
import pytest

from apportion.solver.backends import SolveSettings, get_backend
from apportion.solver.backends.pulp_backend import MIN_SOLVER_SECONDS, make_solver
from apportion.solver.status import Status
from tests.solver.backends.hard_models import market_split

LIMIT = 1.0
SLOW = 0.6  # what PuLP's own work is made to take: an MPS write of ~200,000 nonzeros
# CBC looks at its clock between nodes and heuristics, not continuously (0–0.4 s measured).
MARGIN = 0.45


def _slowed(monkeypatch: pytest.MonkeyPatch, cls: Any, method: str) -> None:
    original = getattr(cls, method)

    def slow(*args: Any, **kwargs: Any) -> Any:
        time.sleep(SLOW)
        return original(*args, **kwargs)

    monkeypatch.setattr(cls, method, slow)


def test_cbc_is_given_what_is_left_after_the_mps_file(monkeypatch: pytest.MonkeyPatch) -> None:
    _slowed(monkeypatch, pulp.LpProblem, "writeMPS")
    launched: list[list[str]] = []
    popen = subprocess.Popen

    def recording(args: list[str], *rest: Any, **kwargs: Any) -> Any:
        launched.append(list(args))
        return popen(args, *rest, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", recording)
    model = market_split(4, 40)  # needs far more than LIMIT
    started = time.perf_counter()
    solution = get_backend("pulp").solve(model, SolveSettings(solver="CBC", time_limit=LIMIT))
    elapsed = time.perf_counter() - started
    (args,) = [a for a in launched if "-sec" in a]
    given = float(args[args.index("-sec") + 1])
    assert given <= LIMIT - SLOW + 0.05, given  # before: the whole limit, after the write
    assert elapsed < LIMIT + MARGIN, elapsed  # before: LIMIT + SLOW and more
    assert solution.status is Status.FEASIBLE, solution.detail


def test_highs_through_pulp_is_given_what_is_left(monkeypatch: pytest.MonkeyPatch) -> None:
    _slowed(monkeypatch, pulp.HiGHS, "buildSolverModel")
    model = market_split(4, 40)
    started = time.perf_counter()
    solution = get_backend("pulp").solve(model, SolveSettings(solver="HiGHS", time_limit=LIMIT))
    elapsed = time.perf_counter() - started
    assert elapsed < LIMIT + MARGIN, elapsed
    assert solution.status is Status.FEASIBLE, solution.detail


def test_a_spent_limit_still_gives_the_solver_a_moment() -> None:
    model = market_split(3, 10)
    past = time.perf_counter() - 5.0
    for name in ("CBC", "HiGHS"):
        solver = make_solver(name, model, SolveSettings(time_limit=1.0), deadline=past)
        assert solver.timeLimit == MIN_SOLVER_SECONDS
    assert make_solver("CBC", model, SolveSettings(), deadline=None).timeLimit is None


def test_the_limit_shrinks_as_the_deadline_nears() -> None:
    model = market_split(3, 10)
    solver = make_solver("CBC", model, SolveSettings(), deadline=time.perf_counter() + 10.0)
    first = solver.timeLimit
    time.sleep(0.05)
    assert first is not None and 9.0 < solver.timeLimit < first <= 10.0
