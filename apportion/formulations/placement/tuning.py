"""HiGHS search settings for this family's MILPs (the estimate, the pooled relaxation and the
per-candidate model)."""

from __future__ import annotations

from apportion.solver.context import TimeBudget

# RINS and RENS (sub-MIPs around the LP point) spent most of the search time on these models
# without improving the greedy start much more than the other heuristics do; the time goes to
# the tree instead, where the bound, the real difficulty, is closed. Search settings only: they
# do not change what counts as optimal.
HIGHS_OPTIONS: dict[str, bool | int | float | str] = {
    "mip_heuristic_run_rins": False,
    "mip_heuristic_run_rens": False,
}

#: HiGHS reads its time limit only between presolve passes, and completes a partial start (a
#: presolve of its own) before that: on this family's models a pass took up to 45 µs per row on 2
#: busy cores (2 s on the 44,000-row per-candidate model at 128 nodes, for a limit under 1 s).
SETUP_SECONDS_PER_ROW = 5e-5


def too_big_for(budget: TimeBudget, rows: int) -> bool:
    """Whether a model of `rows` rows would overrun what is left of a time limit before its
    solver even reads the limit (never without a limit)."""
    left = budget.left()
    return left is not None and left < rows * SETUP_SECONDS_PER_ROW
