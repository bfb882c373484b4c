"""Entities are unique and known; job pairs name known jobs and GPU types."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from apportion.solver.errors import FieldError
from apportion.solver.snapshot.sharing import JobPair
from apportion.solver.snapshot.view import SnapshotView


def entity_errors(snapshot: SnapshotView) -> list[FieldError]:
    """Duplicate entity ids; jobs naming an entity that the snapshot's list does not have."""
    if snapshot.entities is None:
        return []
    errors = [
        FieldError(("entities",), f"duplicate entity id {name!r}", "duplicate")
        for name, n in Counter(e.id for e in snapshot.entities).items()
        if n > 1
    ]
    known = {e.id for e in snapshot.entities}
    for i, job in enumerate(snapshot.jobs):
        if job.entity is not None and job.entity not in known:
            errors.append(
                FieldError(
                    ("jobs", i, "entity"),
                    f"unknown entity {job.entity!r}; the snapshot's entities are "
                    f"{_listing(e.id for e in snapshot.entities)}",
                    "unknown_entity",
                )
            )
    return errors


def pair_errors(snapshot: SnapshotView) -> list[FieldError]:
    """Pairs must name two different known jobs, known GPU types, and appear once.

    Checked on whole columns first (snapshots may offer 100,000s of pairs); only a snapshot
    with a problem pays for the per-pair pass that locates it.
    """
    pairs = snapshot.job_pairs
    if not pairs:
        return []
    jobs = {job.id for job in snapshot.jobs}
    types = {g.name for g in snapshot.gpu_types}
    first = [p.a for p in pairs]
    second = [p.b for p in pairs]
    keys = {(a, b) if a < b else (b, a) for a, b in zip(first, second, strict=True)}
    named = set(first) | set(second)
    used_types = {name for p in pairs for name in p.throughput}
    clean = named <= jobs and used_types <= types and len(keys) == len(pairs)
    if clean and all(a != b for a, b in zip(first, second, strict=True)):
        return []
    return _locate_pair_errors(pairs, jobs, types)


def _locate_pair_errors(
    pairs: Sequence[JobPair], jobs: set[str], types: set[str]
) -> list[FieldError]:
    errors: list[FieldError] = []
    seen: set[tuple[str, str]] = set()
    for i, pair in enumerate(pairs):
        for side, job_id in (("a", pair.a), ("b", pair.b)):
            if job_id not in jobs:
                errors.append(
                    FieldError(("job_pairs", i, side), f"unknown job {job_id!r}", "unknown_job")
                )
        if pair.a == pair.b:
            errors.append(
                FieldError(("job_pairs", i), f"job {pair.a!r} paired with itself", "value_error")
            )
        key = (pair.a, pair.b) if pair.a < pair.b else (pair.b, pair.a)
        if key in seen:
            errors.append(
                FieldError(("job_pairs", i), f"duplicate pair {key[0]!r}, {key[1]!r}", "duplicate")
            )
        seen.add(key)
        for gpu in pair.throughput.keys() - types:
            errors.append(
                FieldError(
                    ("job_pairs", i, "throughput", gpu),
                    f"unknown GPU type {gpu!r}",
                    "unknown_gpu_type",
                )
            )
    return errors


def _listing(names: Iterable[str]) -> str:
    shown = sorted(names)
    return ", ".join(repr(n) for n in shown[:10]) + (", ..." if len(shown) > 10 else "")
