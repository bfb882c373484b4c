"""One column of a field, checked at once: what the field's per-job type accepts, in numpy.

A column is a list (decoded JSON: numbers, strings, booleans, null) or, in the library, a
one-dimensional numpy array (a masked array's masked entries are null). Each check answers the
column's values, or None when some entry is not plainly acceptable; then the field's own
pydantic type, the one a job's document is validated with, goes over the column
(`refusals`): it names each refused entry with the per-job schema's own reason, or, when it
refuses none (an entry of a type numpy does not read, such as a numpy scalar in a list), its
validated values are used. So a column accepts exactly what the per-job schema accepts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache, partial
from operator import is_, is_not
from types import GenericAlias
from typing import Any

import numpy as np
from pydantic import ConfigDict, TypeAdapter, ValidationError

from apportion.solver.arraytypes import BoolArray, FloatArray
from apportion.solver.snapshot.types import MAX_COUNT, MAX_MAGNITUDE, MAX_NAME, MIN_MAGNITUDE

#: A refused entry: (row, reason, error type), as the per-job schema gives them.
Refusal = tuple[int, str, str]

_NUMBERS: frozenset[type] = frozenset({int, float, type(None)})
_INTEGERS: frozenset[type] = frozenset({int, type(None)})
_FLAGS = frozenset({bool, type(None)})
_LAZY = ConfigDict(defer_build=True)


@cache
def adapter(element: Any) -> TypeAdapter[list[Any]]:
    """The validator of a whole column of `element` (built on first use)."""
    return TypeAdapter(GenericAlias(list, element), config=_LAZY)  # type: ignore[arg-type]


def plain(column: Sequence[Any] | np.ndarray) -> list[Any]:
    """The column as a list of Python values (null for a masked entry)."""
    return column.tolist() if isinstance(column, np.ndarray) else list(column)


def refusals(column: Sequence[Any] | np.ndarray, element: Any) -> tuple[list[Any], list[Refusal]]:
    """The column validated entry by entry with the per-job type `element` (in pydantic's
    core): its values, or every refused entry with the reason the per-job schema gives."""
    try:
        return adapter(element).validate_python(plain(column)), []
    except ValidationError as exc:
        found = [
            (int(e["loc"][0]), e["msg"].removeprefix("Value error, "), e["type"])
            for e in exc.errors(include_url=False)
        ]
        return [], found


def real_values(
    column: Sequence[Any] | np.ndarray, zero: bool, signed: bool
) -> tuple[FloatArray, BoolArray] | None:
    """(values, missing) of a column of numbers, null (NaN) where not given, each 0 (when
    `zero`) or of a magnitude from `MIN_MAGNITUDE` to `MAX_MAGNITUDE` (either sign if `signed`).
    The values are the column's own copy."""
    read = _floats(column, "fiu", _NUMBERS)
    if read is None:
        return None
    values, missing = read
    return read if in_range(values, zero, signed, missing) else None


def plain_reals(column: Any, rows: int, zero: bool, signed: bool) -> FloatArray | None:
    """The usual column of numbers read at once: a numeric numpy array (not masked) of `rows`
    entries, every one in range (as `real_values`), as floats (a copy). None for anything
    else: the column is then read as `real_values` reads it, and each problem found."""
    if type(column) is not np.ndarray or column.shape != (rows,) or column.dtype.kind not in "fiu":
        return None
    values = column.astype(float)
    return values if in_range(values, zero, signed) else None


def plain_counts(column: Any, rows: int) -> FloatArray | None:
    """`plain_reals` for whole numbers (an integer array) from 1 to `MAX_COUNT`."""
    if type(column) is not np.ndarray or column.shape != (rows,) or column.dtype.kind not in "iu":
        return None
    values = column.astype(float)
    return values if _inside(values, 1, MAX_COUNT) else None


def in_range(
    values: FloatArray, zero: bool, signed: bool, missing: BoolArray | None = None
) -> bool:
    """Whether every value not `missing` is 0 (when `zero`) or of a magnitude from
    `MIN_MAGNITUDE` to `MAX_MAGNITUDE` (either sign if `signed`); NaN never is."""
    size = np.abs(values) if signed else values
    if _inside(size, MIN_MAGNITUDE, MAX_MAGNITUDE):
        return True
    inside = (size >= MIN_MAGNITUDE) & (size <= MAX_MAGNITUDE)
    if zero:
        inside |= values == 0
    if missing is not None:
        inside |= missing
    return bool(inside.all())


def count_values(column: Sequence[Any] | np.ndarray) -> tuple[FloatArray, BoolArray] | None:
    """(values, missing) of a column of whole numbers from 1 to `MAX_COUNT` (JSON integers, not
    booleans nor floats: an integer dtype in numpy), null (NaN) where not given."""
    read = _floats(column, "iu", _INTEGERS)
    if read is None:
        return None
    values, missing = read
    if _inside(values, 1, MAX_COUNT):
        return read
    inside = (values >= 1) & (values <= MAX_COUNT)
    return read if bool((inside | missing).all()) else None


def _inside(values: FloatArray, low: float, high: float) -> bool:
    """Whether the extremes settle it: every value from `low` to `high`, none NaN (a NaN makes
    both comparisons false). Two reductions instead of a mask per rule; when they do not
    settle it (a 0, a null, a value out of range), the entries are checked one by one."""
    return (
        bool(values.size)
        and bool(np.minimum.reduce(values, axis=None) >= low)
        and bool(np.maximum.reduce(values, axis=None) <= high)
    )


def _floats(
    column: Sequence[Any] | np.ndarray, kinds: str, types: frozenset[type]
) -> tuple[FloatArray, BoolArray] | None:
    """(values as floats, NaN where missing; missing) of an array of dtype `kinds`, or of a
    list of Python `types` (None: missing); None for anything else. The values are a copy."""
    if isinstance(column, np.ndarray):
        if column.dtype.kind not in kinds:
            return None
        if type(column) is np.ndarray:  # nothing masked: no entry is missing
            return column.astype(float), np.zeros(column.size, dtype=bool)
        missing = np.ma.getmaskarray(column)
        values = np.ma.getdata(column).astype(float)
        values[missing] = np.nan
        return values, missing
    given = set(map(type, column))
    if not given <= types:
        return None
    try:
        values = np.array(column, dtype=float)  # None becomes NaN
    except OverflowError:  # an integer beyond any float: out of range
        return None
    missing = np.isnan(values)
    nulls = column.count(None) if type(None) in given else 0
    if int(missing.sum()) != nulls:  # a NaN given, not an entry left out
        return None
    return values, missing


def name_values(column: Sequence[Any] | np.ndarray, nullable: bool = False) -> list[Any] | None:
    """A column of names (`types.Name`, or null where `nullable`) that need no stripping, as
    given; None for anything else (a name to strip or of the wrong length, a wrong type), which
    the pydantic type decides."""
    given = plain(column) if isinstance(column, np.ndarray) else list(column)
    names = list(filter(partial(is_not, None), given)) if nullable else given
    # str.strip returns the very string when there is nothing to strip and it is a str (a
    # subclass gets a copy; anything else raises), and strips every character pydantic's does
    # (and a few control characters more: those go to pydantic).
    try:
        if not all(map(is_, names, map(str.strip, names))):
            return None
    except TypeError:
        return None
    if "" in names or max(map(len, names), default=0) > MAX_NAME:
        return None
    return given


def plain_name(value: Any) -> bool:
    """Whether `value` is one name as `name_values` accepts it, as it stands."""
    return type(value) is str and value.strip() is value and 0 < len(value) <= MAX_NAME


def flag_values(column: Sequence[Any] | np.ndarray) -> BoolArray | None:
    """A column of true/false, null (false) where not given."""
    if isinstance(column, np.ndarray):
        if column.dtype.kind != "b":
            return None
        return np.ma.getdata(column) & ~np.ma.getmaskarray(column)
    if not set(map(type, column)) <= _FLAGS:
        return None
    # bool(None) is False, the default; map runs in C.
    return np.fromiter(map(bool, column), dtype=bool, count=len(column))


def job_documents(columns: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The job documents that jobs given as columns stand for (entry j of each column is job
    j's; a null entry is left out), before any validation; None when the columns do not line
    up (validating the columns says why). Python per job: for editing a snapshot (a what-if
    patch), not for solving one."""
    ids = columns.get("id")
    flat = {key: value for key, value in columns.items() if key != "throughput"}
    typed = columns.get("throughput", {})
    if not isinstance(ids, list | tuple | np.ndarray) or not isinstance(typed, Mapping):
        return None
    every = [*flat.values(), *typed.values()]
    if not all(isinstance(c, list | tuple | np.ndarray) and len(c) == len(ids) for c in every):
        return None
    documents: list[dict[str, Any]] = [{} for _ in ids]
    for key, column in flat.items():
        for document, value in zip(documents, plain(column), strict=True):
            if value is not None:
                document[key] = value
    for name, column in typed.items():
        for document, value in zip(documents, plain(column), strict=True):
            if value is not None:
                document.setdefault("throughput", {})[name] = value
    return documents
