"""Gavel's throughputs file (`--throughputs FILE`, Gavel's `--throughputs_file`), read and checked.

The file is the one Gavel's scheduler reads (`simulation_throughputs.json`): per worker type, per
job type written as a Python tuple `"('ResNet-50 (batch size 64)', 4)"`, a map whose `"null"`
entry is the whole job's steps/s alone on that type and whose other entries, keyed by another
job type, are the two jobs' steps/s when they share the GPUs: `[this, other]`.

Any worker types may appear (Gavel's own files have `v100`, `p100`, `k80`); a job type missing
from a worker type cannot run there. Every problem names the file and the key.
"""

from __future__ import annotations

import ast
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from apportion.refdata.gavel import GavelTable, JobType
from apportion.simulator.traces.errors import TraceError

Pairs = dict[tuple[JobType, JobType], dict[str, tuple[float, float]]]


def read_throughputs(path: str | Path) -> GavelTable:
    """The table in Gavel's throughputs file at `path`; a `TraceError` names the file and the
    first key that cannot be read."""
    source = Path(path)
    raw = _document(source)
    isolated: dict[JobType, dict[str, float]] = {}
    pairs: Pairs = {}
    for worker, entries in raw.items():
        if not isinstance(entries, dict):
            raise TraceError(source, f"{worker!r}: expected a map of job types")
        for text, entry in entries.items():
            job_type = _job_type(source, worker, text)
            where = f"{worker} {text}"
            if not isinstance(entry, dict) or "null" not in entry:
                raise TraceError(source, f'{where}: expected a map with a "null" entry')
            isolated.setdefault(job_type, {})[worker] = _rate(source, where, entry["null"])
            for other, both in entry.items():
                if other != "null":
                    _pair(source, f"{where} with {other}", job_type, other, both, worker, pairs)
    if not isolated:
        raise TraceError(source, "no job types in the file")
    workers = tuple(raw)
    job_types = tuple(sorted(isolated))
    rates = np.array([[isolated[jt].get(k, 0.0) for k in workers] for jt in job_types])
    return GavelTable(workers, job_types, rates, pairs)


def _document(source: Path) -> dict[str, Any]:
    try:
        raw = json.loads(source.read_text(encoding="utf-8"))
    except OSError as exc:
        raise TraceError(source, f"cannot read the file: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise TraceError(source, f"not JSON: {exc}") from None
    if not isinstance(raw, dict) or not raw:
        raise TraceError(source, "expected a JSON object keyed by worker type (v100, ...)")
    return raw


def _job_type(source: Path, worker: str, text: str) -> JobType:
    try:
        model, scale_factor = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError):
        model, scale_factor = None, None
    if not isinstance(model, str) or not isinstance(scale_factor, int) or scale_factor < 1:
        raise TraceError(
            source, f"{worker} {text!r}: expected a job type like \"('ResNet-50', 4)\""
        )
    return model, scale_factor


def _rate(source: Path, where: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise TraceError(source, f"{where}: expected a number of steps/s, got {value!r}")
    if value < 0:
        raise TraceError(source, f"{where}: a throughput cannot be negative ({value})")
    return float(value)


def _pair(
    source: Path, where: str, job_type: JobType, other: str, both: Any, worker: str, pairs: Pairs
) -> None:
    """Keep one orientation of each co-located pair (the table's convention: a ≤ b)."""
    partner = _job_type(source, worker, other)
    if not isinstance(both, list) or len(both) != 2:
        raise TraceError(source, f"{where}: expected [this job's, the other's] steps/s")
    mine, theirs = (_rate(source, where, value) for value in both)
    if job_type <= partner:
        pairs.setdefault((job_type, partner), {})[worker] = (mine, theirs)
