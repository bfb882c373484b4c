"""Jobs given as columns: `"jobs": {"id": [...], "throughput": {"v100": [...]}, ...}`.

The snapshot's jobs may be an object of columns instead of a list of objects: each field of
plain jobs (`columns.FIELDS`) one array with an entry per job, entry j of every column being
job j's; `throughput` an object of such columns, one per GPU type. A column left out gives every
job the field's default, a null entry gives that job the default (as a job document leaves the
field out). In the library a column may be a numpy array (a masked array's masked entries are
null), read without a Python object per entry.

Validated a column at a time (`column_values`), the columns accept exactly what the per-job
schema accepts of those fields, and a refused entry gets the per-job schema's reason, located
by column and row (`jobs.weight[17]`, `jobs.throughput.v100[3]`; the first `ROW_ERRORS` of a
column, then how many more). Besides: a column whose length is not the number of ids, a
throughput column naming an unknown GPU type (where it gives a value), a repeated id, and a
field only a job document can carry (placements, deadline options, entities, ...): the jobs
must then be given as a list. The answer is the `JobColumns` the fast path of a list builds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import GenericAlias
from typing import Any, TypeVar

import numpy as np
from pydantic import BaseModel, Field, create_model

from apportion.solver.arraytypes import BoolArray, FloatArray
from apportion.solver.errors import FieldError, InputError
from apportion.solver.snapshot import column_values as cv
from apportion.solver.snapshot.checks.duplicates import duplicate_errors
from apportion.solver.snapshot.columns import (
    FIELDS,
    NON_NEGATIVE,
    RANGES,
    SIGNED,
    Given,
    JobColumns,
)
from apportion.solver.snapshot.jobs import Job
from apportion.solver.snapshot.types import (
    Finite,
    Flag,
    Name,
    NonNegative,
    Positive,
    PositiveCount,
    Strict,
)

ROW_ERRORS = 10
#: Each column's entry type: the per-job field's type, null allowed (the field's default).
ELEMENTS: dict[str, Any] = {
    "id": Name,
    "scale_factor": PositiveCount | None,
    "weight": Positive | None,
    "throughput": NonNegative | None,
    **dict.fromkeys(NON_NEGATIVE, NonNegative | None),
    **dict.fromkeys(SIGNED, Finite | None),
    "workload_class": Name | None,
    "consolidate": Flag | None,
}
Loc = tuple[str | int, ...]
Column = Sequence[Any] | np.ndarray
T = TypeVar("T")


class _Reader:
    """Reads the columns of one document; every problem goes to `errors`."""

    def __init__(self) -> None:
        self.errors: list[FieldError] = []
        self.rows: int | None = None

    def column(self, loc: Loc, value: Any) -> Column | None:
        """`value` if it is a column of the right length, else None (and why, in `errors`)."""
        if isinstance(value, np.ndarray):
            if value.ndim != 1:
                return self._refuse(loc, f"must be one-dimensional, not {value.ndim}-D", "shape")
        elif not isinstance(value, list | tuple):
            return self._refuse(loc, "Input should be a valid list", "list_type")
        if self.rows is not None and len(value) != self.rows:
            return self._refuse(
                loc,
                f"has {len(value)} entries and `id` has {self.rows}: a column gives one entry "
                "per job",
                "column_length",
            )
        column: Column = value
        return column

    def values(self, loc: Loc, value: Any, fast: Callable[[Any], T | None]) -> T | None:
        """The column at `loc` read by `fast`, or None: not a column, or entries refused by
        the field's per-job type (each reported)."""
        column = self.column(loc, value)
        if column is None:
            return None
        quick = fast(column)
        if quick is not None:
            return quick
        validated = self.validated(loc, column)
        if validated is None:
            return None
        # Accepted by the per-job type though not plainly (numpy scalars in a list, say): its
        # values are plain.
        read = fast(validated)
        if read is None:
            raise AssertionError(f"jobs.{loc}: the column's check refuses what its type accepts")
        return read

    def validated(self, loc: Loc, column: Column) -> list[Any] | None:
        """The column through the per-job type of its field; refused entries reported."""
        values, refused = cv.refusals(column, ELEMENTS[str(loc[0])])
        if not refused:
            return values
        shown = refused[:ROW_ERRORS]
        self.errors += [FieldError((*loc, row), msg, kind) for row, msg, kind in shown]
        if len(refused) > len(shown):
            more = f"and {len(refused) - len(shown)} more entries refused"
            self.errors.append(FieldError(loc, more, "more_entries"))
        return None

    def _refuse(self, loc: Loc, reason: str, kind: str) -> Column | None:
        self.errors.append(FieldError(loc, reason, kind))
        return None


def jobs_from_columns(
    document: Mapping[str, Any], gpu_names: list[str] | None
) -> JobColumns | list[FieldError]:
    """The jobs of a columnar `document`, or every problem found (located within the jobs).
    `gpu_names`: the snapshot's GPU types (None when they are themselves invalid)."""
    reader = _Reader()
    reader.errors += _key_errors(document)
    ids = _ids(reader, document)
    if reader.rows is None:  # no column of ids: nothing to hold the other columns against
        return reader.errors
    m = reader.rows
    scale = (
        _counts(reader, document["scale_factor"], m) if "scale_factor" in document else np.ones(m)
    )
    reals = {name: _reals(reader, name, document[name], m) for name in RANGES if name in document}
    matrix = _throughput(reader, document.get("throughput", {}), gpu_names or [], m)
    classes = flags = None
    if "workload_class" in document:
        classes = reader.values(("workload_class",), document["workload_class"], _names)
    if "consolidate" in document:
        flags = reader.values(("consolidate",), document["consolidate"], cv.flag_values)
    if reader.errors or ids is None or scale is None or matrix is None:
        return reader.errors
    if gpu_names is None:  # the GPU types' own errors say what is wrong
        return [FieldError(("throughput",), "needs valid `gpu_types`", "gpu_types")]
    throughput, given = matrix
    real_columns = {name: values for name, values in reals.items() if values is not None}
    return JobColumns(
        ids, gpu_names, throughput, scale, real_columns, given=Given(given, classes, flags)
    )


def _key_errors(document: Mapping[str, Any]) -> list[FieldError]:
    errors = []
    for key in document:
        if key in FIELDS:
            continue
        if key in Job.model_fields:
            reason = (
                f"`{key}` cannot be given as a column: give the jobs as a list of objects to use it"
            )
            errors.append(FieldError((key,), reason, "not_a_column"))
        else:
            errors.append(FieldError((key,), "Extra inputs are not permitted", "extra_forbidden"))
    return errors


def _ids(reader: _Reader, document: Mapping[str, Any]) -> list[str] | None:
    """The validated (stripped) ids, every one once; sets the number of rows."""
    if "id" not in document:
        reader.errors.append(FieldError(("id",), "Field required", "missing"))
        return None
    if not isinstance(document["id"], list | tuple | np.ndarray):
        reader.column(("id",), document["id"])  # says why
        return None
    reader.rows = len(document["id"])
    ids = reader.values(("id",), document["id"], cv.name_values)
    if ids is None:
        return None
    repeated = duplicate_errors(ids, lambda i: ("id", i), "job id", ("id",))
    reader.errors += repeated
    return None if repeated else ids


def _names(column: Column) -> list[str | None] | None:
    return cv.name_values(column, nullable=True)


def _counts(reader: _Reader, value: Any, m: int) -> FloatArray | None:
    """Scale factors, 1 where not given."""
    plain = cv.plain_counts(value, m)
    if plain is not None:
        return plain
    read = reader.values(("scale_factor",), value, cv.count_values)
    return None if read is None else _filled(*read, 1.0)


def _reals(reader: _Reader, name: str, value: Any, m: int) -> FloatArray | None:
    """A real field: NaN where not given, except `weight`, 1 by default."""
    zero, signed = RANGES[name]
    plain = cv.plain_reals(value, m, zero, signed)
    if plain is not None:
        return plain
    read = reader.values((name,), value, lambda c: cv.real_values(c, zero, signed))
    if read is None or name != "weight":  # NaN where not given already
        return None if read is None else read[0]
    return _filled(*read, 1.0)


def _filled(values: FloatArray, missing: BoolArray, default: float) -> FloatArray:
    """`values` (the column's own copy) with `default` where not given."""
    np.copyto(values, default, where=missing)
    return values


def _throughput(
    reader: _Reader, value: Any, gpu_names: list[str], m: int
) -> tuple[FloatArray, BoolArray] | None:
    """The (jobs × types) matrix, 0 where not given, and which entries were given. Names are
    stripped as a job's are; where two name one type, a later column's given entries win, as a
    later key does in a job's document."""
    if not isinstance(value, Mapping):
        reason = "Input should be a valid dictionary"
        reader.errors.append(FieldError(("throughput",), reason, "dict_type"))
        return None
    at_once = _plain_throughput(value, gpu_names, m)
    if at_once is not None:
        return at_once
    # Built a type at a time, each type's column contiguous; handed on as (jobs × types).
    by_type, given = np.zeros((len(gpu_names), m)), np.zeros((len(gpu_names), m), dtype=bool)
    column_of = {name: k for k, name in enumerate(gpu_names)}
    fine = True
    for key, column in value.items():
        loc: Loc = ("throughput", key)
        name = _type_name(reader, loc, key)
        read = reader.values(loc, column, lambda c: cv.real_values(c, True, False))
        if name is None or read is None:
            fine = False
            continue
        values, missing = read
        present = ~missing
        if name not in column_of:
            if present.any():
                reason = f"unknown GPU type {name!r}"
                reader.errors.append(FieldError(loc, reason, "unknown_gpu_type"))
                fine = False
            continue
        k = column_of[name]
        np.copyto(by_type[k], values, where=present)
        given[k] |= present
    return (by_type.T, given.T) if fine else None


def _plain_throughput(
    value: Mapping[Any, Any], gpu_names: list[str], m: int
) -> tuple[FloatArray, BoolArray] | None:
    """The usual throughput columns read at once: each a numeric numpy array (not masked) of
    `m` entries under the name of a GPU type as it is, all of them in range. None for anything
    else: the columns are then read one by one, and each problem found."""
    columns = list(value.values())
    if not all(
        type(c) is np.ndarray and c.dtype.kind in "fiu" and c.shape == (m,) for c in columns
    ):
        return None
    column_of = {name: k for k, name in enumerate(gpu_names)}
    rows = [column_of.get(key, -1) if type(key) is str else -1 for key in value]
    if not columns or min(rows) < 0:
        return None
    given = np.array(columns, dtype=float)  # (given types × jobs), a copy
    if not cv.in_range(given, zero=True, signed=False):
        return None
    if rows == list(range(len(gpu_names))):
        return given.T, np.ones((m, len(gpu_names)), dtype=bool)
    by_type, known = np.zeros((len(gpu_names), m)), np.zeros((len(gpu_names), m), dtype=bool)
    by_type[rows], known[rows] = given, True
    return by_type.T, known.T


def _type_name(reader: _Reader, loc: Loc, key: Any) -> str | None:
    if cv.plain_name(key):
        return str(key)
    names, refused = cv.refusals([key], Name)
    for _, msg, kind in refused:
        reader.errors.append(FieldError(loc, msg, kind))
    return None if refused else str(names[0])


def _column_model() -> type[BaseModel]:
    """The columnar jobs' JSON Schema, from the job fields' own types and descriptions."""
    fields: dict[str, Any] = {}
    for name in (f for f in Job.model_fields if f in FIELDS):
        info = Job.model_fields[name]
        kind: Any = GenericAlias(list, ELEMENTS[name])
        if name == "throughput":
            kind = dict[Name, kind]
        required = name == "id"
        note = "" if required else " A null entry, or no column: the default."
        fields[name] = (
            kind,
            Field(... if required else None, description=f"{info.description}{note}"),
        )
    model: type[BaseModel] = create_model(
        "JobsAsColumns",
        __base__=Strict,
        __doc__="Jobs as columns: each field an array with one entry per job (entry j of every "
        "column is job j's), `throughput` one such array per GPU type. Fields beyond these "
        "(placements, deadline options, entities, ...) need the jobs as a list of objects.",
        **fields,
    )
    return model


def _no_defaults(schema: dict[str, Any]) -> None:
    for prop in schema.get("properties", {}).values():
        prop.pop("default", None)


JobsAsColumns = _column_model()
JobsAsColumns.model_config["json_schema_extra"] = _no_defaults


def located_by_column(error: InputError) -> InputError:
    """`error` with each place in a job (`snapshot.jobs[j].field`, as a policy names a field
    it needs) located as jobs given as columns are: `snapshot.jobs.field[j]`."""

    def moved(loc: Loc) -> Loc:
        if loc[:2] == ("snapshot", "jobs") and len(loc) > 3 and isinstance(loc[2], int):
            return (*loc[:2], *loc[3:], loc[2])
        return loc

    return InputError([FieldError(moved(e.loc), e.msg, e.type) for e in error.errors])
