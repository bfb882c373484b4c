"""The contention-sensitivity table a placement policy reads (DeepShare, FORMULATIONS §7).

CS(target | co-runner) = throughput of the target alone / its throughput next to the co-runner,
≥ 1. A *configuration* is (workload class, total GPUs, nodes spanned): DeepShare's key
`"FSDP,8,2"` is `{"workload_class": "FSDP", "gpus": 8, "nodes": 2}`. Entries are measured pairs;
`class_defaults` give a value for a pair of classes whatever their configurations (used when the
class pair has no measured entry). How missing pairs are looked up is in `solver.contention`.
"""

from __future__ import annotations

from collections import Counter
from typing import Annotated

from pydantic import Field

from solver.errors import FieldError
from solver.schema_types import Name, Strict

_Sensitivity = Annotated[float, Field(ge=1.0, allow_inf_nan=False)]


class JobConfig(Strict):
    """A job as the contention table sees it."""

    workload_class: Name = Field(description="Workload class, e.g. `FSDP` or `MoE`.")
    gpus: int = Field(ge=1, description="Total GPUs of the job.")
    nodes: int = Field(ge=1, description="Nodes the job spans.")

    @property
    def key(self) -> tuple[str, int, int]:
        return (self.workload_class, self.gpus, self.nodes)

    def __str__(self) -> str:
        return f"{self.workload_class},{self.gpus},{self.nodes}"


class ContentionEntry(Strict):
    """One measured pair: the target's slowdown factor next to the co-runner."""

    target: JobConfig
    co_runner: JobConfig
    cs: _Sensitivity = Field(
        description="Contention sensitivity ≥ 1 (1 = unaffected). Clip noisy ratios at 1."
    )


class ClassDefault(Strict):
    """CS of any job of `target_class` next to any job of `co_runner_class`."""

    target_class: Name
    co_runner_class: Name
    cs: _Sensitivity


class ContentionTable(Strict):
    """Measured contention sensitivities; lookups fall back as `solver.contention` describes."""

    entries: list[ContentionEntry] = Field(default_factory=list)
    class_defaults: list[ClassDefault] = Field(default_factory=list)


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
