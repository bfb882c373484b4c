"""The contention-sensitivity table a placement policy reads (DeepShare, FORMULATIONS §7).

CS(target | co-runner) = throughput of the target alone / its throughput next to the co-runner, ≥ 1.
A *configuration* is (workload class, total GPUs, nodes spanned): DeepShare's key `"FSDP,8,2"` is
`{"workload_class": "FSDP", "gpus": 8, "nodes": 2}`. Entries are measured pairs; `class_defaults`
give a value for a pair of classes whatever their configurations (used when the class pair has no
measured entry). How missing pairs are looked up is in `formulations.placement.contention`.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StrictFloat

from apportion.solver.snapshot.types import Magnitude, Name, PositiveCount, Strict

_Sensitivity = Annotated[StrictFloat, Field(ge=1.0, allow_inf_nan=False), Magnitude(zero=False)]


class JobConfig(Strict):
    """A job as the contention table sees it."""

    workload_class: Name = Field(description="Workload class, e.g. `FSDP` or `MoE`.")
    gpus: PositiveCount = Field(description="Total GPUs of the job.")
    nodes: PositiveCount = Field(description="Nodes the job spans.")

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
    """Measured contention sensitivities; lookups fall back as `formulations.placement.contention`
    describes."""

    entries: list[ContentionEntry] = Field(default_factory=list)
    class_defaults: list[ClassDefault] = Field(default_factory=list)
    max_cs: _Sensitivity | None = Field(
        default=None,
        description="Cap on every sensitivity the table gives (DeepShare's simulator floors "
        "the throughput ratio at 0.35: CS ≤ 1/0.35 ≈ 2.86). Default: no cap.",
    )
