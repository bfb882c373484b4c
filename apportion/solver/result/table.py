"""A result's jobs as columns: the answer for a million jobs without an object per job.

The pipeline keeps the per-job answer as arrays: the ids, the allocation (jobs × GPU types),
effective throughputs, normalized shares and the policy's metrics, plus the few jobs with a
reason or a placement, by row. `JobTable` is also the sequence of `JobResult` every reader
iterates: the objects are built when first read, all at once (iteration, `==`) or only those
asked for (`table[j]`, `table[:100]`, `by_id`). Written as columns (`columns`), the arrays go to
JSON as they are (orjson writes numpy arrays); read back (`from_columns`), they become arrays
again. `layout` is how the result writes its jobs by default: as rows or as columns.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from functools import cached_property
from itertools import compress, repeat
from operator import is_not
from typing import Any, Literal, TypeVar, cast, overload

import numpy as np

from apportion.solver.arraytypes import FloatArray, IntArray
from apportion.solver.collector import paused_gc
from apportion.solver.result.jobs import JobResult

Layout = Literal["rows", "columns"]
LAYOUTS: tuple[Layout, ...] = ("rows", "columns")
V = TypeVar("V")


class JobTable(Sequence[JobResult]):
    """The per-job answer as columns; row j is job `ids[j]`, column k of `allocation` is GPU
    type `gpu_names[k]`. `reasons` and `placements` hold only the jobs that have one; a
    metric is an array (NaN: not defined for that job) or a list (null)."""

    def __init__(
        self,
        ids: list[str],
        gpu_names: list[str],
        allocation: FloatArray,
        effective_throughput: FloatArray,
        normalized_share: FloatArray | None = None,
        reasons: dict[int, str] | None = None,
        metrics: Mapping[str, Any] | None = None,
        placements: dict[int, dict[str, int]] | None = None,
        layout: Layout = "rows",
    ) -> None:
        self.ids = ids
        self.gpu_names = gpu_names
        self.allocation = np.asarray(allocation, dtype=float)
        self.effective_throughput = np.asarray(effective_throughput, dtype=float)
        share = normalized_share
        self.normalized_share = None if share is None else np.asarray(share, dtype=float)
        self.reasons = reasons or {}
        self.metrics = dict(metrics or {})
        self.placements = placements or {}
        self.layout = layout

    @cached_property
    def rows(self) -> list[JobResult]:
        """Every job's `JobResult`, built once."""
        with paused_gc():  # a million new objects, none in a cycle
            return self._build(None)

    def __len__(self) -> int:
        return len(self.ids)

    @overload
    def __getitem__(self, index: int) -> JobResult: ...
    @overload
    def __getitem__(self, index: slice) -> list[JobResult]: ...
    def __getitem__(self, index: int | slice) -> JobResult | list[JobResult]:
        if "rows" in self.__dict__:
            return self.rows[index]
        picked = np.arange(len(self))[index]  # IndexError as a list raises it
        if isinstance(index, slice):
            return self._build(picked)
        return self._build(np.array([picked]))[0]

    def __iter__(self) -> Iterator[JobResult]:
        return iter(self.rows)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return self.rows == list(other)

    __hash__ = None  # type: ignore[assignment]  # like the list it stands for

    def __repr__(self) -> str:
        return f"JobTable({len(self)} jobs × {len(self.gpu_names)} GPU types, {self.layout})"

    def by_id(self, job_id: str) -> JobResult:
        """The job called `job_id` (KeyError if none), built alone."""
        try:
            return self[self.ids.index(job_id)]
        except ValueError:
            raise KeyError(job_id) from None

    def columns(self, plain: bool = False) -> dict[str, Any]:
        """The columnar document (`JobResultColumns`): numpy arrays where the entries are
        numbers, as orjson writes them; `plain`: Python lists throughout."""
        # Each type's column contiguous in memory, as orjson needs it.
        by_type = np.ascontiguousarray(self.allocation.T)
        share = self.normalized_share
        document: dict[str, Any] = {
            "id": self.ids,
            "allocation": dict(zip(self.gpu_names, by_type, strict=True)),
            "effective_throughput": np.ascontiguousarray(self.effective_throughput, dtype=float),
            "normalized_share": None if share is None else np.ascontiguousarray(share, float),
            "reason": _dense(self.reasons, len(self)),
            "metrics": {name: _metric_column(v) for name, v in self.metrics.items()},
            "placement": _dense(self.placements, len(self)),
        }
        return _listed(document) if plain else document

    @classmethod
    def from_columns(cls, document: Mapping[str, Any]) -> JobTable:
        """The table a columnar document (`columns`, decoded JSON) gives; ValueError naming
        the column for one of the wrong length or kind."""
        ids = list(document["id"])
        m = len(ids)
        allocation = document["allocation"]
        names = list(allocation)
        columns = {f"allocation.{n}": allocation[n] for n in names}
        for name in ("effective_throughput", "normalized_share", "reason", "placement"):
            columns[name] = document.get(name)
        columns |= {f"metrics.{k}": v for k, v in document.get("metrics", {}).items()}
        for name, column in columns.items():
            if column is not None and len(column) != m:
                raise ValueError(f"jobs.{name} has {len(column)} entries and jobs.id has {m}")
        matrix = np.array([allocation[n] for n in names], dtype=float).reshape(len(names), m)
        share = document.get("normalized_share")
        return cls(
            ids,
            names,
            np.ascontiguousarray(matrix.T),
            np.array(document["effective_throughput"], dtype=float),
            None if share is None else np.array(share, dtype=float),
            _sparse(document.get("reason"), m),
            {k: list(v) for k, v in document.get("metrics", {}).items()},
            _sparse(document.get("placement"), m),
            layout="columns",
        )

    def _build(self, index: IntArray | None) -> list[JobResult]:
        """The `JobResult`s of rows `index` (None: all), built column-wise (`map` runs in C: at
        a million jobs, a loop indexing each column per job was most of the result's time)."""
        every = index is None
        rows: Sequence[int] = range(len(self)) if index is None else index.tolist()
        x = self.allocation if index is None else self.allocation[index]
        ids = self.ids if every else list(map(self.ids.__getitem__, rows))
        eff = self.effective_throughput if index is None else self.effective_throughput[index]
        share = self.normalized_share
        shares = repeat(None) if share is None else (share if every else share[index]).tolist()
        keys = tuple(self.metrics)
        if keys:
            picked = [_metric_values(v, index) for v in self.metrics.values()]
            metrics = map(dict, map(zip, repeat(keys), zip(*picked, strict=True)))
        else:
            metrics = map(dict, repeat((), len(rows)))
        return list(
            map(
                JobResult,
                ids,
                allocation_dicts(self.gpu_names, x),
                eff.tolist(),
                shares,
                map(self.reasons.get, rows),
                metrics,
                map(self.placements.get, rows),
            )
        )


def allocation_dicts(names: list[str], x: FloatArray) -> list[dict[str, float]]:
    """Per job {gpu type: X_jk} over the non-zeros only, in one pass over them (fewer than the
    entries: faster than any per-row construction that reads every entry)."""
    out: list[dict[str, float]] = [{} for _ in range(x.shape[0])]
    rows, cols = np.nonzero(x)
    for j, k, v in zip(rows.tolist(), cols.tolist(), x[rows, cols].tolist(), strict=True):
        out[j][names[k]] = v
    return out


def _metric_values(values: Any, index: IntArray | None) -> list[Any]:
    """A metric's entries (of rows `index`) as JSON writes them: NaN in a float column is null."""
    column = np.asarray(values)
    if index is not None:
        column = column[index]
    if column.dtype.kind != "f":
        out: list[Any] = column.tolist()
        return out
    listed = column.astype(object)
    listed[np.isnan(column)] = None
    written: list[Any] = listed.tolist()
    return written


def _metric_column(values: Any) -> Any:
    """A metric for orjson: an array of numbers or booleans as it is, anything else a list."""
    column = np.asarray(values)
    if column.dtype.kind in "fiub":
        return np.ascontiguousarray(column)
    return _metric_values(column, None)


def _listed(document: dict[str, Any]) -> dict[str, Any]:
    """The document with every array a list (for writers that do not take numpy)."""
    out: dict[str, Any] = {}
    for key, value in document.items():
        if isinstance(value, np.ndarray):
            out[key] = _metric_values(value, None)
        elif isinstance(value, dict):
            out[key] = _listed(value)
        else:
            out[key] = value
    return out


def _dense(entries: Mapping[int, V], m: int) -> list[V | None]:
    """A column with null where the sparse `entries` have nothing."""
    out: list[V | None] = [None] * m
    for j, value in entries.items():
        out[j] = value
    return out


def _sparse(column: Sequence[V | None] | None, m: int) -> dict[int, V]:
    """The non-null entries of a column, by row (the filtering in C)."""
    if column is None:
        return {}
    given = list(map(is_not, column, repeat(None)))
    values = cast(Iterator[V], compress(column, given))
    return dict(zip(compress(range(m), given), values, strict=True))
