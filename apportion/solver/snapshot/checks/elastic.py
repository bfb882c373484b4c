"""Elastic jobs name known GPU types, consistent batch sizes and a current configuration they
could be in; a goodput model needs the cluster's nodes."""

from __future__ import annotations

from apportion.solver.errors import FieldError
from apportion.solver.snapshot.elastic import Configuration, Elastic
from apportion.solver.snapshot.view import SnapshotView

Loc = tuple[str | int, ...]


def elastic_errors(snapshot: SnapshotView) -> list[FieldError]:
    known = {g.name for g in snapshot.gpu_types}
    errors: list[FieldError] = []
    for j, job in enumerate(snapshot.jobs):
        if job.elastic is not None:
            errors += _job_errors(job.elastic, ("jobs", j, "elastic"), known, snapshot)
    return errors


def _job_errors(
    elastic: Elastic, loc: Loc, known: set[str], snapshot: SnapshotView
) -> list[FieldError]:
    errors: list[FieldError] = []
    listed, model = elastic.configurations, elastic.model
    if (listed is None) == (model is None):
        errors.append(
            FieldError(loc, "give either `configurations` or a goodput `model`", "one_of")
        )
    for c, config in enumerate(listed or []):
        errors += _configuration_errors(config, (*loc, "configurations", c), known)
    if model is not None:
        errors += _model_errors(elastic, loc, known, snapshot)
    current = elastic.current
    if current is not None:
        where = (*loc, "current")
        if current.gpu_type not in known:
            errors.append(_unknown(current.gpu_type, (*where, "gpu_type")))
        elif listed is not None and not any(
            c.gpu_type == current.gpu_type
            and c.gpus == current.gpus
            and current.nodes in (None, c.nodes)
            for c in listed
        ):
            errors.append(
                FieldError(where, "matches none of the job's configurations", "no_such_config")
            )
    if elastic.pinned and current is None:
        errors.append(
            FieldError(
                (*loc, "pinned"),
                "a pinned job keeps its `current` configuration: give it",
                "missing_current",
            )
        )
    return errors


def _configuration_errors(config: Configuration, loc: Loc, known: set[str]) -> list[FieldError]:
    errors: list[FieldError] = []
    if config.gpu_type not in known:
        errors.append(_unknown(config.gpu_type, (*loc, "gpu_type")))
    if config.nodes > config.gpus:
        errors.append(
            FieldError(
                (*loc, "nodes"),
                f"{config.gpus} GPUs cannot span {config.nodes} nodes",
                "value_error",
            )
        )
    parts = (config.batch_size, config.local_batch)
    if None not in parts:
        implied = config.gpus * (config.local_batch or 0) * (config.accumulation_steps + 1)
        if implied != config.batch_size:
            errors.append(
                FieldError(
                    (*loc, "batch_size"),
                    f"gpus × local_batch × (accumulation_steps + 1) = {implied}, not "
                    f"{config.batch_size}",
                    "value_error",
                )
            )
    if config.goodput is None and config.throughput is None:
        errors.append(FieldError(loc, "give its goodput or its throughput", "missing"))
    return errors


def _model_errors(
    elastic: Elastic, loc: Loc, known: set[str], snapshot: SnapshotView
) -> list[FieldError]:
    model = elastic.model
    assert model is not None
    where = (*loc, "model")
    errors: list[FieldError] = []
    if snapshot.nodes is None:
        errors.append(
            FieldError(
                where,
                "a goodput model is evaluated on the cluster's node shapes: give `nodes`",
                "missing_nodes",
            )
        )
    if model.init_batch > model.max_batch:
        errors.append(
            FieldError(
                (*where, "max_batch"),
                f"below the initial batch {model.init_batch}",
                "value_error",
            )
        )
    for name, per_type in model.types.items():
        if name not in known:
            errors.append(_unknown(name, (*where, "types", name)))
        if per_type.min_local_batch > per_type.max_local_batch:
            errors.append(
                FieldError(
                    (*where, "types", name, "max_local_batch"),
                    f"below min_local_batch {per_type.min_local_batch}",
                    "value_error",
                )
            )
    current = elastic.current
    if current is not None and current.gpu_type in known and current.gpu_type not in model.types:
        errors.append(
            FieldError(
                (*loc, "current", "gpu_type"),
                f"the goodput model has no entry for {current.gpu_type!r}",
                "no_such_config",
            )
        )
    return errors


def _unknown(name: str, loc: Loc) -> FieldError:
    return FieldError(loc, f"unknown GPU type {name!r}", "unknown_gpu_type")
