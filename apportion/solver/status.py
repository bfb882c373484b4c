"""One status vocabulary for every backend, policy, CLI exit code and HTTP answer."""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    """Outcome of a solve, independent of the backend that produced it."""

    OPTIMAL = "optimal"
    #: Stopped by a limit (time, gap, iterations) with a feasible incumbent; the gap is reported.
    FEASIBLE = "feasible"
    #: The exact model could not be solved; a documented heuristic answered instead.
    FALLBACK = "fallback"
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    #: Stopped by a limit before any feasible point was found.
    TIME_LIMIT = "time_limit"
    ERROR = "error"

    @property
    def has_solution(self) -> bool:
        return self in _WITH_SOLUTION

    @property
    def exit_code(self) -> int:
        """CLI exit code: 0 when an allocation was returned, 1 otherwise (2 is for bad input)."""
        return 0 if self.has_solution else 1


_WITH_SOLUTION = frozenset({Status.OPTIMAL, Status.FEASIBLE, Status.FALLBACK})
