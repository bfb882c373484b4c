"""Jobs validated a column at a time: the fast path of `parse_snapshot` for the common case.

Validated job by job, a million-job snapshot becomes a million `Job` objects, most of the time
it takes; the formulations read arrays. Here each field is checked across all jobs at once (its
types, then its range, in numpy) and kept as an array. The path covers the fields of plain jobs
(`FIELDS`) and accepts only what the full validation accepts, with the same values: anything
else it does not decide (a field it does not cover, a wrong type, a value out of range, an
unknown GPU type, a repeated id) makes it answer None, and the snapshot goes through the full
validation, which then reports the problem exactly as it always does.

`JobColumns` holds the columns, and the jobs' documents when they came as a list of objects
(`snapshot.columnar` makes it from jobs given as columns). Anything that wants `Job` objects
gets them through the full validation of those documents, built once, when first asked for.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import chain, repeat
from typing import Any, Literal, overload

import numpy as np
from pydantic import ConfigDict, TypeAdapter, ValidationError

from apportion.solver.arraytypes import BoolArray, FloatArray
from apportion.solver.errors import InputError
from apportion.solver.snapshot.column_values import count_values, real_values
from apportion.solver.snapshot.jobs import Job
from apportion.solver.snapshot.types import Flag, Name

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


@dataclass(frozen=True, eq=False)
class Given:
    """What jobs given as columns said beyond the arrays, to write their documents again:
    which throughput entries were given (not null), the workload classes and the flags."""

    throughput: BoolArray
    workload_class: list[str | None] | None = None
    consolidate: BoolArray | None = None


class JobColumns(Sequence[Job]):
    """A snapshot's jobs as columns; a sequence of `Job` objects, built when first read.

    `throughput` is (jobs × `gpu_names`); `reals` holds the real-valued fields of `FIELDS`
    that some job gives (NaN where a job does not, `weight` 1); `scale_factor` is as given
    (default 1). `real` reads any of them, with the default of a field no job gives. Exactly
    one of `documents` (the jobs came as a list of objects) and `given` (they came as columns)
    is set; `layout` says which, and a snapshot is written back in the layout it came in.
    """

    def __init__(
        self,
        ids: list[str],
        gpu_names: list[str],
        throughput: FloatArray,
        scale_factor: FloatArray,
        reals: dict[str, FloatArray],
        documents: list[dict[str, Any]] | None = None,
        given: Given | None = None,
    ) -> None:
        self.documents = documents
        self.given = given
        self.ids = ids
        self.gpu_names = gpu_names
        self.throughput = throughput
        self.scale_factor = scale_factor
        self.reals = reals

    def real(self, name: str) -> FloatArray:
        """A real-valued field of every job (a copy): NaN where not given, `weight` 1."""
        if name in self.reals:
            return self.reals[name].copy()
        return np.full(len(self), 1.0 if name == "weight" else np.nan)

    @property
    def layout(self) -> Literal["rows", "columns"]:
        return "rows" if self.given is None else "columns"

    @cached_property
    def jobs(self) -> list[Job]:
        documents = self.documents if self.given is None else self._documents(self.given)
        try:
            return _JOBS.validate_python(documents)
        except ValidationError as exc:  # the columns' checks let through what a job refuses
            raise InputError.from_validation(exc, ("snapshot", "jobs"), Job) from None

    def __len__(self) -> int:
        return len(self.ids)

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
        return f"JobColumns({len(self)} jobs, given as {self.layout})"

    def columns(self) -> dict[str, Any]:
        """The jobs as the columnar document that gives them (lists, null where not given)."""
        given = self.given or Given(self.throughput != 0)
        out: dict[str, Any] = {
            "id": list(self.ids),
            "scale_factor": self.scale_factor.astype(np.int64).tolist(),
            "throughput": {
                name: _nullable(self.throughput[:, k], ~given.throughput[:, k])
                for k, name in enumerate(self.gpu_names)
                if given.throughput[:, k].any()
            },
        }
        for name, values in self.reals.items():
            missing = np.isnan(values)
            if not missing.all():
                out[name] = _nullable(values, missing)
        if given.workload_class is not None:
            out["workload_class"] = list(given.workload_class)
        if given.consolidate is not None:
            out["consolidate"] = given.consolidate.tolist()
        return out

    def _documents(self, given: Given) -> list[dict[str, Any]]:
        """One document per job from the columns (only for whoever asks for `Job` objects)."""
        scale = self.scale_factor.astype(np.int64).tolist()
        docs = [
            {"id": i, "scale_factor": s, "throughput": {}}
            for i, s in zip(self.ids, scale, strict=True)
        ]
        rows, cols = np.nonzero(given.throughput)
        values = self.throughput[rows, cols].tolist()
        for j, k, v in zip(rows.tolist(), cols.tolist(), values, strict=True):
            docs[j]["throughput"][self.gpu_names[k]] = v
        for name, column in self.reals.items():
            for j in np.flatnonzero(~np.isnan(column)).tolist():
                docs[j][name] = float(column[j])
        for j, value in enumerate(given.workload_class or ()):
            if value is not None:
                docs[j]["workload_class"] = value
        if given.consolidate is not None:
            for j in np.flatnonzero(given.consolidate).tolist():
                docs[j]["consolidate"] = True
        return docs


def _nullable(values: FloatArray, missing: BoolArray) -> list[float | None]:
    """A float column as JSON writes it: null where not given."""
    if not missing.any():
        return values.tolist()  # type: ignore[no-any-return]
    out = values.astype(object)
    out[missing] = None
    written: list[float | None] = out.tolist()
    return written


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
    return JobColumns(ids, gpu_names, throughput, scale, reals, documents=documents)


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
    """The real-valued fields some job gives, as columns (NaN where a job does not)."""
    out: dict[str, FloatArray] = {}
    for name, allowed in RANGES.items():
        default = 1.0 if name == "weight" else None
        if name not in present:  # no job gives it: nothing to read, nor to hold
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
    read = count_values(values)
    return None if read is None or read[1].any() else read[0]


def _reals(values: list[Any], allowed: tuple[bool, bool]) -> FloatArray | None:
    """A real column (None = not given → NaN): JSON numbers in the schema's range, else None."""
    read = real_values(values, *allowed)
    return None if read is None else read[0]


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
