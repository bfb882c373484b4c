"""Reading trace files row by row, every value checked where it stands.

A `Row` is one job's raw fields plus where they came from (file and line, or the job's key in a
JSON file); its accessors turn text or JSON values into numbers and raise a `TraceError` naming
that place and the field when a value is missing, not a number, or out of range.
"""

from __future__ import annotations

import csv
import gzip
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from apportion.simulator.traces.errors import TraceError


def read_lines(path: Path) -> list[str]:
    """The file's lines (a `.gz` file decompressed), or a `TraceError` if it cannot be read."""
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rt", encoding="utf-8-sig", newline="") as handle:
                text = handle.read()
        else:
            text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise TraceError(path, f"cannot read the file: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, EOFError) as exc:
        raise TraceError(path, f"not a text file: {exc}") from None
    return text.splitlines()


def read_json(path: Path) -> Any:
    """The file's JSON value, or a `TraceError` (with the line of a syntax error)."""
    lines = read_lines(path)
    try:
        return json.loads("\n".join(lines))
    except json.JSONDecodeError as exc:
        raise TraceError(path, f"not valid JSON: {exc.msg}", line=exc.lineno) from None


def csv_rows(path: Path, required: Sequence[str]) -> Iterator[Row]:
    """The data rows of a CSV file with a header naming at least `required`; blank lines are
    not rows, a row with more or fewer fields than the header is an error."""
    lines = read_lines(path)
    try:
        header = [name.strip() for name in next(csv.reader(lines[:1]), [])]
    except csv.Error as exc:
        raise TraceError(path, f"not a CSV file: {exc}", line=1) from None
    missing = [name for name in required if name not in header]
    if missing:
        raise TraceError(path, f"the header lacks the column(s) {', '.join(missing)}", line=1)
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        try:
            fields = next(csv.reader([line], skipinitialspace=True))
        except csv.Error as exc:
            raise TraceError(path, f"malformed CSV row: {exc}", line=number) from None
        if len(fields) != len(header):
            reason = f"{len(fields)} fields, expected {len(header)} ({','.join(header)})"
            raise TraceError(path, reason, line=number)
        yield Row(path, dict(zip(header, fields, strict=True)), line=number)


@dataclass(frozen=True)
class Row:
    """One job's raw fields and where they came from."""

    source: Path
    fields: Mapping[str, Any]
    line: int | None = None
    item: str | None = None

    def error(self, reason: str) -> TraceError:
        return TraceError(self.source, reason, line=self.line, item=self.item)

    def value(self, name: str) -> Any:
        if name not in self.fields:
            raise self.error(f"no field {name!r}")
        return self.fields[name]

    def text(self, name: str) -> str:
        value = self.value(name)
        if not isinstance(value, str) or not value.strip():
            raise self.error(f"{name} {value!r} is not a non-empty text")
        return value.strip()

    def integer(self, name: str, *, minimum: int = 0) -> int:
        value = self.value(name)
        parsed: int | None = None
        if isinstance(value, int) and not isinstance(value, bool):
            parsed = value
        elif isinstance(value, str):
            try:
                parsed = int(value.strip())
            except ValueError:
                parsed = None
        if parsed is None:
            raise self.error(f"{name} {value!r} is not an integer")
        if parsed < minimum:
            raise self.error(f"{name} is {parsed}, must be at least {minimum}")
        return parsed

    def number(self, name: str, *, minimum: float = 0.0, strict: bool = False) -> float:
        """A finite number ≥ `minimum` (> `minimum` when `strict`)."""
        return self._checked(name, _to_float(self.value(name)), minimum, strict)

    def numbers(self, name: str, separator: str, *, minimum: float = 0.0) -> list[float]:
        """A `separator`-joined list of finite numbers ≥ `minimum` (a JSON list also works)."""
        value = self.value(name)
        items = value.split(separator) if isinstance(value, str) else value
        if not isinstance(items, list):
            raise self.error(f"{name} {value!r} is not a {separator!r}-separated list")
        return [self._checked(name, _to_float(item), minimum, False) for item in items]

    def _checked(self, name: str, value: float | None, minimum: float, strict: bool) -> float:
        raw = self.fields.get(name)
        if value is None or not math.isfinite(value):
            raise self.error(f"{name} {raw!r} is not a finite number")
        if value < minimum or (strict and value == minimum):
            bound = f"above {minimum:g}" if strict else f"at least {minimum:g}"
            raise self.error(f"{name} is {value:g}, must be {bound}")
        return value


def _to_float(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None
