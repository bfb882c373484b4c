"""The throughput table an operator supplies: a row per job key (workload class), a column per
GPU type, steps/s of the whole job at its GPU count (as a snapshot's `throughput`; a missing or
0 entry = it cannot run there). How a job finds its key is the integration's convention.

JSON (`{"resnet50": {"v100": 410.2, "k80": 96.5}, ...}`) or CSV (a header of a key column then
one column per GPU type; an empty cell = cannot run there). Every column must be a GPU type of
the cluster (`check_columns`): a typo must not silently leave a type unused.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from apportion.solver.errors import FieldError, InputError

Table = dict[str, dict[str, float]]


def load_table(path: Path) -> Table:
    """Read and check a throughput table (`.json`, or `.csv`); `InputError` naming the row and
    column of the first problems."""
    where = ("throughputs",)
    try:
        text = path.read_text()
    except OSError as exc:
        raise InputError.single(where, f"cannot read {path}: {exc.strerror}") from None
    if path.suffix.lower() == ".csv":
        raw: Any = _csv_rows(text)
    else:
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            msg = f"{path} is not JSON ({exc.msg}, line {exc.lineno}); use .csv for CSV"
            raise InputError.single(where, msg) from None
    return checked_table(raw)


def _csv_rows(text: str) -> dict[str, dict[str, Any]]:
    rows = list(csv.reader(line for line in text.splitlines() if line.strip()))
    if len(rows) < 2 or len(rows[0]) < 2:
        msg = "a CSV table needs a header (key, then GPU types) and at least one row"
        raise InputError.single(("throughputs",), msg)
    header = [h.strip() for h in rows[0]]
    table: dict[str, dict[str, Any]] = {}
    for number, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            msg = f"line {number} has {len(row)} cells, the header {len(header)}"
            raise InputError.single(("throughputs",), msg)
        cells = {h: c.strip() for h, c in zip(header[1:], row[1:], strict=True)}
        table[row[0].strip()] = {h: _number(c) for h, c in cells.items() if c}
    return table


def _number(cell: str) -> Any:
    try:
        return float(cell)
    except ValueError:
        return cell  # reported by `checked_table` with its row and column


def checked_table(raw: Any) -> Table:
    """A decoded table, checked: `InputError` naming every bad row and cell."""
    if not isinstance(raw, dict) or not raw:
        raise InputError.single(("throughputs",), "must map job keys to rows (non-empty)")
    errors: list[FieldError] = []
    table: Table = {}
    for key, row in raw.items():
        if not isinstance(row, dict):
            errors.append(FieldError(("throughputs", key), "must map GPU types to throughputs"))
            continue
        table[key] = {}
        for gpu_type, value in row.items():
            ok = isinstance(value, int | float) and not isinstance(value, bool)
            if not ok or not math.isfinite(value) or value < 0:
                msg = f"{value!r} is not a non-negative number of steps/s"
                errors.append(FieldError(("throughputs", key, gpu_type), msg))
            elif value > 0:
                table[key][gpu_type] = float(value)
    if errors:
        raise InputError(errors)
    return table


def check_columns(table: Mapping[str, Mapping[str, float]], gpu_types: Iterable[str]) -> None:
    """Every GPU type the table names is one the cluster has; `InputError` otherwise."""
    known = sorted(set(gpu_types))
    errors = [
        FieldError(("throughputs", key, column), f"not a GPU type of the cluster {known}")
        for key, row in table.items()
        for column in row
        if column not in known
    ]
    if errors:
        raise InputError(errors)


def keys_text(table: Mapping[str, object], most: int = 5) -> str:
    """The table's first keys, for a message (`lm, resnet50, ...`)."""
    keys = sorted(table)
    return ", ".join(keys[:most]) + (", ..." if len(keys) > most else "")
