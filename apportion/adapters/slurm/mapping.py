"""Which throughputs a Slurm job has: a table the operator supplies, keyed by a job attribute.

The convention. A job's key is the `model=KEY` entry of its comment (`sbatch
--comment=model=resnet50`), else its job name (`sbatch -J resnet50`). Its row of the table gives
the job's throughput per GPU type (steps/s of the whole job at its GPU count, as a snapshot's
`throughput`; a missing or 0 entry = it cannot run there). The comment may also carry
`weight=W`, the job's priority weight for the policy (default 1). Comment entries are separated
by commas or spaces: `--comment="model=resnet50,weight=2"`. (Slurm's own priority is not used as
the weight: the adapter sets it to enact each round.) A job that asks for a GPU type
(`--gres=gpu:v100:2`) can run only there; its row is cut down to that type.

The table is JSON (`{"resnet50": {"v100": 410.2, "k80": 96.5}, ...}`) or CSV (a header of a key
column then one column per GPU type; an empty cell = cannot run there). Every column must be a
GPU type of the cluster: a typo must not silently leave a type unused.
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from apportion.adapters.slurm.slurmcli import SlurmJob
from apportion.solver.errors import FieldError, InputError

Table = dict[str, dict[str, float]]

_ENTRY = re.compile(r"(?P<key>[A-Za-z_][\w.-]*)=(?P<value>[^\s,;]+)")


@dataclass(frozen=True)
class Mapped:
    """A job the adapter can schedule: its table key, throughputs and weight."""

    key: str
    throughput: dict[str, float]
    weight: float


@dataclass(frozen=True)
class Unmapped:
    """A job the adapter leaves alone, and why (one line for the operator)."""

    reason: str


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
    return _checked(raw)


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
        return cell  # reported by `_checked` with its row and column


def _checked(raw: Any) -> Table:
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


def comment_entries(comment: str) -> dict[str, str]:
    """The `key=value` entries of a job comment (`model=resnet50,weight=2`)."""
    return {m["key"]: m["value"] for m in _ENTRY.finditer(comment)}


def map_job(job: SlurmJob, table: Mapping[str, Mapping[str, float]]) -> Mapped | Unmapped:
    """The job's key, throughputs and weight under the convention, or why it has none."""
    entries = comment_entries(job.comment)
    key, source = (entries["model"], "comment") if "model" in entries else (job.name, "name")
    row = table.get(key)
    if row is None:
        return Unmapped(
            f"no throughput row for {key!r} (its {source}); set --comment=model=KEY with a "
            f"key of the table ({', '.join(sorted(table)[:5])}{', ...' if len(table) > 5 else ''})"
        )
    weight = entries.get("weight", "1")
    try:
        value = float(weight)
    except ValueError:
        value = -1.0
    if not (math.isfinite(value) and value > 0):
        return Unmapped(f"comment weight={weight!r} is not a positive number")
    throughput = dict(row)
    if job.requested_type is not None:
        # A typed request cannot change type on 22.05: the job runs there or nowhere.
        throughput = {k: v for k, v in throughput.items() if k == job.requested_type}
    if not throughput:
        where = f"its requested type {job.requested_type}" if job.requested_type else "any type"
        return Unmapped(f"row {key!r} has no throughput on {where}")
    return Mapped(key, throughput, value)
