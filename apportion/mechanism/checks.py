"""A round's inputs checked against the snapshot, every problem located from the request root
(`("allocation", "job-3", "v100")`, `("previous", "job-1", "node-7")`, `("pairs", 2, "a")`).

The snapshot itself is validated by `solver.snapshot`; here: ids and GPU types that exist, time
fractions in [0, 1] that sum to at most 1 per job (pairs included), seconds that are finite and
not negative, held GPUs that fit their node, and pairs of two distinct jobs of one gang size.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from apportion.mechanism.arrays import Allocation
from apportion.mechanism.types import PairShare
from apportion.solver.errors import FieldError
from apportion.solver.result.table import JobTable
from apportion.solver.snapshot import Snapshot, node_type

#: Round-off a policy's fractions may carry (a job's Σ_k X_jk computed as 1 + 1e-9).
TOLERANCE = 1e-6
Loc = tuple[str | int, ...]


def round_errors(
    snapshot: Snapshot,
    allocation: Allocation,
    received: Mapping[str, Mapping[str, float]],
    previous: Mapping[str, Mapping[str, int]],
    pairs: Sequence[PairShare],
    elapsed: float | None = None,
) -> list[FieldError]:
    """Every problem with a round's inputs (empty when they are sound). A `JobTable` may list
    jobs the snapshot does not (they are not in the round); its types and values are checked."""
    errors: list[FieldError] = []
    if not snapshot.nodes:
        errors.append(
            FieldError(
                ("snapshot", "nodes"),
                "a round places jobs on nodes: give the snapshot's `nodes`",
                "missing_nodes",
            )
        )
    jobs = {job.id: job.scale_factor for job in snapshot.jobs}
    types = {g.name for g in snapshot.gpu_types}
    if isinstance(allocation, JobTable):
        errors += _table_errors(allocation, types)
    else:
        errors += _per_job_errors(("allocation",), allocation, jobs, types, upper=1.0)
    errors += _per_job_errors(("received",), received, jobs, types, upper=math.inf)
    errors += _previous_errors(snapshot, previous, jobs)
    errors += _pair_errors(pairs, jobs, types, received)
    if not errors:  # sums are only meaningful over well-formed entries
        errors += _sum_errors(allocation, pairs)
        errors += _elapsed_errors(elapsed, received)
    return errors


def _number_problem(value: Any, upper: float) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "must be a number"
    if not math.isfinite(value) or value < 0 or value > upper:
        return "a time fraction is between 0 and 1" if upper == 1.0 else "must be finite, ≥ 0"
    return None


def _values_errors(
    loc: Loc, values: Mapping[str, Any], types: set[str], upper: float
) -> list[FieldError]:
    errors = []
    for name, value in values.items():
        if name not in types:
            errors.append(
                FieldError((*loc, name), f"unknown GPU type {name!r}", "unknown_gpu_type")
            )
        elif (problem := _number_problem(value, upper)) is not None:
            errors.append(FieldError((*loc, name), problem, "number_range"))
    return errors


def _per_job_errors(
    loc: Loc,
    values: Mapping[str, Mapping[str, Any]],
    jobs: Mapping[str, int],
    types: set[str],
    upper: float,
) -> list[FieldError]:
    errors = []
    for job_id, per_type in values.items():
        if job_id not in jobs:
            errors.append(FieldError((*loc, job_id), f"unknown job {job_id!r}", "unknown_job"))
        else:
            errors += _values_errors((*loc, job_id), per_type, types, upper)
    return errors


def _table_errors(table: JobTable, types: set[str]) -> list[FieldError]:
    """A result's columns: known GPU types, every fraction in [0, 1] (the first bad one named)."""
    errors = [
        FieldError(("allocation", name), f"unknown GPU type {name!r}", "unknown_gpu_type")
        for name in table.gpu_names
        if name not in types
    ]
    x = table.allocation
    bad = np.argwhere(~(np.isfinite(x) & (x >= 0) & (x <= 1)))
    if len(bad):
        j, k = bad[0].tolist()
        loc = ("allocation", table.ids[j], table.gpu_names[k])
        errors.append(FieldError(loc, "a time fraction is between 0 and 1", "number_range"))
    return errors


def _previous_errors(
    snapshot: Snapshot, previous: Mapping[str, Mapping[str, Any]], jobs: Mapping[str, int]
) -> list[FieldError]:
    """Held GPUs name known jobs and nodes, fit the node, and are of one GPU type."""
    nodes = {n.id: (n.gpus, node_type(snapshot, n)) for n in snapshot.nodes or []}
    errors = []
    for job_id, held in previous.items():
        loc: Loc = ("previous", job_id)
        if job_id not in jobs:
            errors.append(FieldError(loc, f"unknown job {job_id!r}", "unknown_job"))
            continue
        kinds = set()
        for node_id, gpus in held.items():
            if node_id not in nodes:
                errors.append(
                    FieldError((*loc, node_id), f"unknown node {node_id!r}", "unknown_node")
                )
                continue
            size, kind = nodes[node_id]
            kinds.add(kind)
            if isinstance(gpus, bool) or not isinstance(gpus, int) or not 1 <= gpus <= size:
                msg = f"node {node_id!r} has {size} GPUs: hold from 1 to {size} there"
                errors.append(FieldError((*loc, node_id), msg, "value_error"))
        if len(kinds) > 1:
            msg = f"a gang holds GPUs of one type; these span {sorted(kinds)}"
            errors.append(FieldError(loc, msg, "value_error"))
    return errors


def _pair_errors(
    pairs: Sequence[PairShare],
    jobs: Mapping[str, int],
    types: set[str],
    received: Mapping[str, Mapping[str, Any]],
) -> list[FieldError]:
    errors: list[FieldError] = []
    seen: set[tuple[str, str]] = set()
    for i, pair in enumerate(pairs):
        loc: Loc = ("pairs", i)
        unknown = [(s, v) for s, v in (("a", pair.a), ("b", pair.b)) if v not in jobs]
        errors += [FieldError((*loc, s), f"unknown job {v!r}", "unknown_job") for s, v in unknown]
        if unknown:
            continue
        key = (pair.a, pair.b) if pair.a < pair.b else (pair.b, pair.a)
        if pair.a == pair.b:
            errors.append(FieldError((*loc, "b"), f"job {pair.a!r} paired with itself"))
        elif key in seen:
            errors.append(FieldError(loc, f"duplicate pair {key[0]!r}, {key[1]!r}", "duplicate"))
        elif jobs[pair.a] != jobs[pair.b]:
            msg = f"a pair shares one gang: scale factors {jobs[pair.a]} and {jobs[pair.b]}"
            errors.append(FieldError(loc, msg))
        seen.add(key)
        errors += _values_errors((*loc, "allocation"), pair.allocation, types, 1.0)
        together = _values_errors((*loc, "received"), pair.received, types, math.inf)
        errors += together or _together_errors(loc, pair, received)
    return errors


def _together_errors(
    loc: Loc, pair: PairShare, received: Mapping[str, Mapping[str, Any]]
) -> list[FieldError]:
    """Time together is part of each member's received time, so it cannot exceed it."""
    errors = []
    for name, seconds in pair.received.items():
        for member in (pair.a, pair.b):
            own = received.get(member, {}).get(name, 0.0)
            if seconds > own * (1 + TOLERANCE) + TOLERANCE:
                msg = f"{seconds:g} s together exceeds {member!r}'s received {own:g} s on {name!r}"
                errors.append(FieldError((*loc, "received", name), msg))
                break
    return errors


def _sum_errors(allocation: Allocation, pairs: Sequence[PairShare]) -> list[FieldError]:
    """Σ_k X_jk + Σ_{pairs ∋ j} Σ_k Y_pk ≤ 1: a job is in one place at a time."""
    if isinstance(allocation, JobTable):
        total = dict(zip(allocation.ids, allocation.allocation.sum(axis=1).tolist(), strict=True))
    else:
        total = {job_id: math.fsum(per.values()) for job_id, per in allocation.items()}
    where: dict[str, Loc] = {job_id: ("allocation", job_id) for job_id in total}
    for i, pair in enumerate(pairs):
        share = math.fsum(pair.allocation.values())
        for member in (pair.a, pair.b):
            total[member] = total.get(member, 0.0) + share
            where.setdefault(member, ("pairs", i, "allocation"))
    return [
        FieldError(where[job_id], f"{job_id!r} is given {t:.6g} of the time (more than 1)")
        for job_id, t in total.items()
        if t > 1 + TOLERANCE
    ]


def _elapsed_errors(
    elapsed: float | None, received: Mapping[str, Mapping[str, float]]
) -> list[FieldError]:
    if elapsed is None:
        return []
    if not math.isfinite(elapsed) or elapsed < 0:
        return [FieldError(("elapsed",), "must be finite, ≥ 0", "number_range")]
    for job_id, per_type in received.items():
        got = math.fsum(per_type.values())
        if got > elapsed * (1 + TOLERANCE) + TOLERANCE:
            msg = f"{job_id!r} has received {got:g} s, more than the {elapsed:g} s elapsed"
            return [FieldError(("elapsed",), msg)]
    return []
