"""Contention lookups: exact entries first, then the documented fallbacks, each reported."""

from __future__ import annotations

import pytest

from apportion.formulations.placement.contention import ContentionLookup, Source
from apportion.solver.snapshot.contention import ContentionTable


def _table(entries: list[tuple[tuple, tuple, float]], defaults=()) -> ContentionTable:
    def cfg(c: tuple) -> dict:
        return {"workload_class": c[0], "gpus": c[1], "nodes": c[2]}

    return ContentionTable.model_validate(
        {
            "entries": [{"target": cfg(a), "co_runner": cfg(b), "cs": v} for a, b, v in entries],
            "class_defaults": [
                {"target_class": a, "co_runner_class": b, "cs": v} for a, b, v in defaults
            ],
        }
    )


TABLE = _table(
    [
        (("A", 4, 2), ("B", 4, 2), 1.5),
        (("A", 8, 2), ("B", 4, 2), 2.0),
        (("A", 2, 2), ("B", 4, 2), 1.2),
        (("B", 4, 2), ("A", 4, 2), 1.1),
    ],
    defaults=[("A", "C", 1.7)],
)


def test_exact_entry_is_used_and_named() -> None:
    found = ContentionLookup(TABLE)(("A", 4, 2), ("B", 4, 2))
    assert (found.cs, found.source, found.entry) == (1.5, Source.EXACT, "A,4,2 | B,4,2")


def test_nearest_configuration_of_the_same_class_pair() -> None:
    # A,4,4 | B,4,2: distance to A,4,2 is |log2 4 − log2 2| = 1 (nodes), to A,8,2 it is 2.
    found = ContentionLookup(TABLE)(("A", 4, 4), ("B", 4, 2))
    assert (found.cs, found.source, found.entry) == (1.5, Source.NEAREST, "A,4,2 | B,4,2")


def test_nearest_ties_take_the_larger_sensitivity() -> None:
    # A,4,2 is a tie between A,8,2 and A,2,2 once the exact entry is absent: 2.0 over 1.2.
    table = _table([(("A", 8, 2), ("B", 4, 2), 2.0), (("A", 2, 2), ("B", 4, 2), 1.2)])
    found = ContentionLookup(table)(("A", 4, 2), ("B", 4, 2))
    assert (found.cs, found.source) == (2.0, Source.NEAREST)


def test_class_default_then_one() -> None:
    lookup = ContentionLookup(TABLE)
    assert lookup(("A", 4, 2), ("C", 2, 2)).cs == 1.7
    assert lookup(("A", 4, 2), ("C", 2, 2)).source is Source.CLASS_DEFAULT
    assert (lookup(("C", 4, 2), ("A", 2, 2)).cs, lookup(("C", 4, 2), ("A", 2, 2)).source) == (
        1.0,
        Source.DEFAULT,
    )
    assert lookup((None, 4, 2), ("A", 4, 2)).source is Source.DEFAULT


@pytest.mark.parametrize(("scope", "expected"), [("multi_node", 1.0), ("all", 1.5)])
def test_single_node_jobs_are_exempt_under_deepshare_scope(scope: str, expected: float) -> None:
    # A,4,1 is not in the table; under scope "all" its nearest entry (A,4,2) applies.
    assert ContentionLookup(TABLE, scope)(("A", 4, 1), ("B", 4, 2)).cs == expected


def test_the_tables_cap_lowers_every_value_above_it_and_keeps_the_source() -> None:
    capped = TABLE.model_copy(update={"max_cs": 1.6})
    lookup = ContentionLookup(capped)
    exact = lookup(("A", 8, 2), ("B", 4, 2))  # 2.0 measured
    assert (exact.cs, exact.source, exact.capped) == (1.6, Source.EXACT, True)
    assert lookup(("A", 4, 2), ("C", 2, 2)).cs == 1.6  # class default 1.7
    below = lookup(("A", 4, 2), ("B", 4, 2))
    assert (below.cs, below.capped) == (1.5, False)
    with pytest.raises(ValueError, match="max_cs"):
        ContentionTable.model_validate({"max_cs": 0.9})
