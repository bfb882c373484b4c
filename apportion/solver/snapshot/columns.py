"""Jobs validated a column at a time: the fast path of `parse_snapshot` for the common case.

Validated job by job, a million-job snapshot becomes a million `Job` objects, most of the time
it takes; the formulations read arrays. Here each field is checked across all jobs at once (its
types, then its range, in numpy) and kept as an array. The path covers the fields of plain jobs
(`FIELDS`) and accepts only what the full validation accepts, with the same values: anything
else it does not decide (a field it does not cover, a wrong type, a value out of range, an
unknown GPU type, a repeated id) makes it answer None, and the snapshot goes through the full
validation, which then reports the problem exactly as it always does.

`JobColumns` holds the documents and their columns. Anything that wants `Job` objects gets them
from the same documents through the full validation, built once, when first asked for.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import cached_property
from itertools import chain, repeat
from typing import Any, overload

import numpy as np
from pydantic import ConfigDict, TypeAdapter, ValidationError

from apportion.solver.arraytypes import FloatArray
from apportion.solver.errors import InputError
from apportion.solver.snapshot.jobs import Job
from apportion.solver.snapshot.types import MAX_COUNT, MAX_MAGNITUDE, MIN_MAGNITUDE, Flag, Name

#: Real-valued job fields besides `weight` (`Positive`): `NonNegative` ones, `Finite` ones.
NON_NEGATIVE = (
    "steps_remaining",
    "time_since_start",
    "isolated_time_done",
    "remaining_time",
    "overhead_seconds",
    "attained_service",
)
SIGNED = ("arrival_time", "deadline")
#: Every field the fast path checks; a job with any other key goes through full validation
#: (the others carry cross-field rules: placements, deadline options, classes, entities).
FIELDS = frozenset(
    {"id", "scale_factor", "weight", "throughput", "workload_class", "consolidate"}
    | set(NON_NEGATIVE + SIGNED)
)
#: What a range allows besides magnitudes from `MIN_MAGNITUDE` to `MAX_MAGNITUDE`: (0, negatives).
POSITIVE_RANGE = (False, False)
NON_NEGATIVE_RANGE = (True, False)
SIGNED_RANGE = (True, True)
RANGES = {
    "weight": POSITIVE_RANGE,
    **dict.fromkeys(NON_NEGATIVE, NON_NEGATIVE_RANGE),
    **dict.fromkeys(SIGNED, SIGNED_RANGE),
}

# Built on first use, like the models (`defer_build`): importing the schema stays cheap.
_LAZY = ConfigDict(defer_build=True)
_NAMES: TypeAdapter[list[str]] = TypeAdapter(list[Name], config=_LAZY)
_OPTIONAL_NAMES: TypeAdapter[list[str | None]] = TypeAdapter(list[Name | None], config=_LAZY)
_FLAGS: TypeAdapter[list[bool]] = TypeAdapter(list[Flag], config=_LAZY)
_JOBS: TypeAdapter[list[Job]] = TypeAdapter(list[Job], config=_LAZY)


class JobColumns(Sequence[Job]):
    """A snapshot's jobs as columns; a sequence of `Job` objects, built when first read.

    `throughput` is (jobs × `gpu_names`); `reals` holds every real-valued field of `FIELDS`
    (NaN where not given, defaults filled in); `scale_factor` is as given (default 1).
    """

    def __init__(
        self,
        documents: list[dict[str, Any]],
        ids: list[str],
        gpu_names: list[str],
        throughput: FloatArray,
        scale_factor: FloatArray,
        reals: dict[str, FloatArray],
    ) -> None:
        self.documents = documents
        self.ids = ids
        self.gpu_names = gpu_names
        self.throughput = throughput
        self.scale_factor = scale_factor
        self.reals = reals

    @cached_property
    def jobs(self) -> list[Job]:
        try:
            return _JOBS.validate_python(self.documents)
        except ValidationError as exc:  # the columns' checks let through what a job refuses
            raise InputError.from_validation(exc, ("snapshot", "jobs")) from None

    def __len__(self) -> int:
        return len(self.documents)

    @overload
    def __getitem__(self, index: int) -> Job: ...
    @overload
    def __getitem__(self, index: slice) -> list[Job]: ...
    def __getitem__(self, index: int | slice) -> Job | list[Job]:
        return self.jobs[index]

    def __iter__(self) -> Iterator[Job]:
        return iter(self.jobs)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return self.jobs == list(other)

    __hash__ = None  # type: ignore[assignment]  # like the list it stands for

    def __repr__(self) -> str:
        return f"JobColumns({len(self)} jobs)"


def job_columns(documents: Any, gpu_names: list[str]) -> JobColumns | None:
    """The jobs as columns, or None when the full validation must decide (see the module)."""
    if type(documents) is not list or not set(map(type, documents)) <= {dict}:
        return None
    present = set(chain.from_iterable(documents))
    if not present <= FIELDS:
        return None
    ids = _names(documents, present)
    if ids is None or len(set(ids)) < len(ids):
        return None
    m = len(documents)
    scale = (
        _counts(_column(documents, "scale_factor", 1)) if "scale_factor" in present else np.ones(m)
    )
    throughput = (
        _throughput(_column(documents, "throughput", {}), gpu_names)
        if "throughput" in present
        else np.zeros((m, len(gpu_names)))
    )
    reals = _real_columns(documents, present)
    if scale is None or throughput is None or reals is None:
        return None
    return JobColumns(documents, ids, gpu_names, throughput, scale, reals)


def _names(documents: list[dict[str, Any]], present: set[str]) -> list[str] | None:
    """The validated (stripped) ids, after the other name and flag fields pass; else None."""
    try:
        if "workload_class" in present:
            _OPTIONAL_NAMES.validate_python(_column(documents, "workload_class"))
        if "consolidate" in present:
            _FLAGS.validate_python(_column(documents, "consolidate", False))
        return _NAMES.validate_python(_column(documents, "id"))
    except ValidationError:
        return None


def _real_columns(
    documents: list[dict[str, Any]], present: set[str]
) -> dict[str, FloatArray] | None:
    """Every real-valued field as a column (NaN where not given, `weight` 1 by default)."""
    out: dict[str, FloatArray] = {}
    for name, allowed in RANGES.items():
        default = 1.0 if name == "weight" else None
        if name not in present:  # no job gives it: nothing to read
            out[name] = np.full(len(documents), np.nan if default is None else default)
            continue
        given = _column(documents, name, default)
        if default is not None and None in given:  # an explicit null where null is refused
            return None
        checked = _reals(given, allowed)
        if checked is None:
            return None
        out[name] = checked
    return out


def _column(documents: list[dict[str, Any]], name: str, default: Any = None) -> list[Any]:
    # dict.get mapped in C: a comprehension per field would be most of the path's time.
    return list(map(dict.get, documents, repeat(name), repeat(default)))


def _counts(values: list[Any]) -> FloatArray | None:
    """A `PositiveCount` column: JSON integers (not booleans) from 1 to `MAX_COUNT`."""
    if values and not (set(map(type, values)) <= {int} and 1 <= min(values) <= MAX_COUNT):
        return None
    if values and max(values) > MAX_COUNT:
        return None
    return np.array(values, dtype=float)


def _reals(values: list[Any], allowed: tuple[bool, bool]) -> FloatArray | None:
    """A real column (None = not given → NaN): JSON numbers in the schema's range, else None."""
    if not set(map(type, values)) <= {float, int, type(None)}:
        return None
    try:
        out = np.array(values, dtype=float)
    except OverflowError:  # an integer beyond any float: out of range
        return None
    missing = np.isnan(out)
    if int(missing.sum()) != values.count(None):  # a NaN given, not a field left out
        return None
    zero_ok, signed = allowed
    size = np.abs(out) if signed else out
    inside = (size >= MIN_MAGNITUDE) & (size <= MAX_MAGNITUDE)
    if zero_ok:
        inside |= out == 0
    return out if bool((inside | missing).all()) else None


def _throughput(values: list[Any], gpu_names: list[str]) -> FloatArray | None:
    """The (jobs × types) matrix of `dict[Name, NonNegative]` columns naming known types."""
    if not set(map(type, values)) <= {dict}:
        return None
    out = np.zeros((len(values), len(gpu_names)))
    found = 0
    for k, name in enumerate(gpu_names):  # a pass per type, in C: types are few, jobs many
        given = _column(values, name)
        checked = _reals(given, NON_NEGATIVE_RANGE)
        if checked is None:
            return None
        absent = given.count(None)
        if absent < len(given):
            out[:, k] = np.where(np.isnan(checked), 0.0, checked)
        found += len(given) - absent
    # Every key was a known type (an explicit null counts as absent, so it fails here too);
    # unknown or unstripped names are left to the full validation.
    return out if found == sum(map(len, values)) else None
