"""Repeated ids, found at once (numpy) and reported up to a bound: a snapshot of 200,000 copies
of one job is refused with a short list, not 200,000 errors."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from apportion.solver.errors import FieldError

Loc = tuple[str | int, ...]

#: Repeats reported one by one; the rest are counted in one more error.
SHOWN = 10


def duplicate_errors(
    ids: Sequence[str], where: Callable[[int], Loc], what: str, whole: Loc
) -> list[FieldError]:
    """An error at `where(i)` for each of the first `SHOWN` entries i that repeat an earlier
    id (`what` names the id: "job id"), then one at `whole` counting the other repeats."""
    if len(set(ids)) == len(ids):
        return []
    values = np.asarray(ids, dtype=str)
    _, first = np.unique(values, return_index=True)
    repeated = np.ones(len(values), dtype=bool)
    repeated[first] = False
    rows = np.flatnonzero(repeated)
    errors = [
        FieldError(where(int(i)), f"duplicate {what} {ids[i]!r}", "duplicate") for i in rows[:SHOWN]
    ]
    if len(rows) > SHOWN:
        errors.append(FieldError(whole, f"and {len(rows) - SHOWN} more duplicates", "duplicate"))
    return errors
