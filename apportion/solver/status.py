"""One status vocabulary for every backend, policy, CLI exit code and HTTP answer.

An answer has two parts, as in linopy (`SolverStatus` × `TerminationCondition`):

- `Status`, the answer's class: what the caller may do with it (enact an optimal allocation,
  enact an incumbent knowing it is not proven, fall back, report infeasibility, ...);
- `Termination`, why the solver stopped (converged, a time or iteration limit, an interrupt, an
  "infeasible or unbounded" verdict, a code nobody knows, ...).

Each backend maps its own codes to a `Termination` in one table, unknown codes to `UNKNOWN`
(never a guess), and `solver.backends.verify.settle` decides the class from the termination and
the point the solver returned. The relative gap is defined here once.
"""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    """The answer's class, independent of the backend that produced it."""

    OPTIMAL = "optimal"
    #: A feasible allocation not proven optimal (an incumbent within a limit, an inexact
    #: optimum); `Termination` says why the solver stopped, the gap how far it may be.
    FEASIBLE = "feasible"
    #: The exact model could not be solved; a documented heuristic answered instead.
    FALLBACK = "fallback"
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    #: Stopped before any feasible point was found (by a limit, an interrupt, or a verdict that
    #: does not say which of infeasible and unbounded holds).
    NO_SOLUTION = "no_solution"
    ERROR = "error"

    @property
    def has_solution(self) -> bool:
        return self in _WITH_SOLUTION

    @property
    def exit_code(self) -> int:
        """CLI exit code: 0 when an allocation was returned, 1 otherwise (2 is for bad input)."""
        return 0 if self.has_solution else 1


_WITH_SOLUTION = frozenset({Status.OPTIMAL, Status.FEASIBLE, Status.FALLBACK})


class Termination(StrEnum):
    """Why the solver (or the policy's own search) stopped."""

    #: Converged: proven optimal (for a MILP, within its gap).
    OPTIMAL = "optimal"
    #: Converged to a reduced accuracy (an interior point's "almost solved").
    INACCURATE = "inaccurate"
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    INFEASIBLE_OR_UNBOUNDED = "infeasible_or_unbounded"
    TIME_LIMIT = "time_limit"
    ITERATION_LIMIT = "iteration_limit"
    #: A limit on solutions or nodes (MILP).
    SOLUTION_LIMIT = "solution_limit"
    #: An objective bound or target was reached.
    OBJECTIVE_LIMIT = "objective_limit"
    #: A limit the backend does not name (cvxpy folds time and iteration limits into one).
    USER_LIMIT = "user_limit"
    #: A callback or the caller asked the solver to stop.
    INTERRUPTED = "interrupted"
    #: The solver gave up on numerical grounds (insufficient progress, ill conditioning).
    NUMERICAL = "numerical"
    SOLVER_ERROR = "solver_error"
    #: No solver ran: nothing to solve, or a heuristic answered.
    NOT_SOLVED = "not_solved"
    #: A code the backend's table does not know, or the solver's own "unknown".
    UNKNOWN = "unknown"

    @property
    def is_limit(self) -> bool:
        """A stop asked for by a limit or the caller, not reached by the solve itself."""
        return self in _LIMITS


_LIMITS = frozenset(
    {
        Termination.TIME_LIMIT,
        Termination.ITERATION_LIMIT,
        Termination.SOLUTION_LIMIT,
        Termination.OBJECTIVE_LIMIT,
        Termination.USER_LIMIT,
        Termination.INTERRUPTED,
    }
)

#: The termination a status implies when nothing more specific is known (an answer built
#: without a solver: an empty model, a heuristic, a policy's own decision).
IMPLIED: dict[Status, Termination] = {
    Status.OPTIMAL: Termination.OPTIMAL,
    Status.FEASIBLE: Termination.UNKNOWN,
    Status.FALLBACK: Termination.NOT_SOLVED,
    Status.INFEASIBLE: Termination.INFEASIBLE,
    Status.UNBOUNDED: Termination.UNBOUNDED,
    Status.NO_SOLUTION: Termination.UNKNOWN,
    Status.ERROR: Termination.SOLVER_ERROR,
}


def relative_gap(bound: float, value: float, maximize: bool = True) -> float:
    """How far `value` may be from the optimum, given a `bound` on it: (bound − value) / |value|
    for a maximization, (value − bound) / |value| for a minimization — the usual MIP gap
    (HiGHS's, Gurobi's) — 0 when the value reaches its bound (or passes it by rounding) and
    infinite when a value of 0 is still short of its bound. Every gap apportion reports or
    tests against is this one."""
    distance = max(bound - value if maximize else value - bound, 0.0)
    if distance == 0.0:
        return 0.0
    return distance / abs(value) if value != 0.0 else float("inf")
