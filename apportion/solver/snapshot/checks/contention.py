"""Contention entries are unique and every configuration can exist."""

from __future__ import annotations

from collections import Counter

from apportion.solver.errors import FieldError
from apportion.solver.snapshot.contention import ContentionTable, JobConfig


def contention_errors(table: ContentionTable | None) -> list[FieldError]:
    """Each pair is given once, and every configuration can exist (nodes ≤ GPUs)."""
    if table is None:
        return []
    errors: list[FieldError] = []
    seen: Counter[tuple[tuple[str, int, int], tuple[str, int, int]]] = Counter()
    for i, entry in enumerate(table.entries):
        pair = (entry.target.key, entry.co_runner.key)
        seen[pair] += 1
        if seen[pair] == 2:
            errors.append(
                FieldError(
                    ("contention", "entries", i),
                    f"duplicate entry for {entry.target} next to {entry.co_runner}",
                    "duplicate",
                )
            )
        for side in ("target", "co_runner"):
            config: JobConfig = getattr(entry, side)
            if config.nodes > config.gpus:
                errors.append(
                    FieldError(
                        ("contention", "entries", i, side, "nodes"),
                        f"{config.nodes} nodes cannot hold a job of {config.gpus} GPUs",
                        "impossible_config",
                    )
                )
    classes = Counter((d.target_class, d.co_runner_class) for d in table.class_defaults)
    for (target, co_runner), n in classes.items():
        if n > 1:
            errors.append(
                FieldError(
                    ("contention", "class_defaults"),
                    f"duplicate default for {target} next to {co_runner}",
                    "duplicate",
                )
            )
    return errors
