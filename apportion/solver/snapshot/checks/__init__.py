"""Cross-field checks that single-field validation cannot express, one module per part."""

from __future__ import annotations

from collections import Counter
from itertools import chain

from apportion.solver.errors import FieldError
from apportion.solver.snapshot.checks.contention import contention_errors
from apportion.solver.snapshot.checks.deadlines import deadline_errors
from apportion.solver.snapshot.checks.duplicates import duplicate_errors
from apportion.solver.snapshot.checks.elastic import elastic_errors
from apportion.solver.snapshot.checks.nodes import node_errors
from apportion.solver.snapshot.checks.service import service_errors
from apportion.solver.snapshot.checks.sharing import entity_errors, pair_errors
from apportion.solver.snapshot.checks.uncertainty import uncertainty_errors
from apportion.solver.snapshot.view import SnapshotView


def consistency_errors(snapshot: SnapshotView) -> list[FieldError]:
    """Cross-field checks that single-field validation cannot express."""
    errors: list[FieldError] = []
    type_names = [g.name for g in snapshot.gpu_types]
    if not snapshot.gpu_types or sum(g.count for g in snapshot.gpu_types) == 0:
        errors.append(
            FieldError(("gpu_types",), "the cluster is empty: no GPUs of any type", "empty_cluster")
        )
    if len(set(type_names)) < len(type_names):  # counted only when some name repeats
        for name, n in Counter(type_names).items():
            if n > 1:
                reason = f"duplicate GPU type {name!r}"
                errors.append(FieldError(("gpu_types",), reason, "duplicate"))
    known = set(type_names)
    jobs = snapshot.jobs
    ids = [job.id for job in jobs]
    errors += duplicate_errors(ids, lambda i: ("jobs", i, "id"), "job id", ("jobs",))
    # Every key at once (in C); the jobs are walked only when some key is unknown.
    if not set(chain.from_iterable(job.throughput for job in jobs)) <= known:
        for i, job in enumerate(jobs):
            for gpu in job.throughput.keys() - known:
                errors.append(
                    FieldError(
                        ("jobs", i, "throughput", gpu),
                        f"unknown GPU type {gpu!r}",
                        "unknown_gpu_type",
                    )
                )
    return (
        errors
        + node_errors(snapshot)
        + contention_errors(snapshot.contention)
        + deadline_errors(snapshot)
        + entity_errors(snapshot)
        + pair_errors(snapshot)
        + service_errors(snapshot)
        + elastic_errors(snapshot)
        + uncertainty_errors(snapshot)
    )
