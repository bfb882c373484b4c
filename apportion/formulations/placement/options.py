"""The options of the contention-placement policy: the reward's weight and form, the penalty,
which jobs contend, and the shapes a job may take."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, Strict, field_validator

from apportion.solver.options import PolicyOptions

_Demand = Annotated[int, Strict(False)]
_Shape = Annotated[tuple[int, int], Strict(False)]


class ContentionPlacementOptions(PolicyOptions):
    w1: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        description="Weight W1 of the mean contention sensitivity; utilization gets W2 = 1 − W1.",
    )
    penalty: Literal["worst", "additive"] = Field(
        "worst",
        description="worst: a job's CS is set by its worst co-runner (DeepShare); additive: "
        "1 + Σ (CS − 1) over its co-runners.",
    )
    objective: Literal["linear", "reference"] = Field(
        "linear",
        description="linear: W2·U − W1·mean CS over every job of the snapshot, a waiting job "
        "counting 1; reference: DeepShare's reward W2·U − W1·mean(1 − 1/CS) over running and "
        "started jobs, solved exactly (needs penalty worst).",
    )
    contention_scope: Literal["multi_node", "all"] = Field(
        "multi_node",
        description="multi_node: jobs on a single node neither suffer nor cause network "
        "contention (DeepShare's simulator); all: every co-located pair counts.",
    )
    # JSON object keys are strings and pairs come as lists: this field converts both.
    shapes: dict[_Demand, list[_Shape]] | None = Field(
        None,
        description="Allowed shapes per demand, {demand: [[nodes, GPUs per node], ...]}; "
        "demands not listed get powers of two up to the node size.",
    )
    allow_single_node: bool = Field(
        True, description="Allow multi-GPU jobs on one node (DeepShare's baselines do not)."
    )

    @field_validator("shapes")
    @classmethod
    def _shapes_match(
        cls, shapes: dict[int, list[tuple[int, int]]] | None
    ) -> dict[int, list[tuple[int, int]]] | None:
        for demand, listed in (shapes or {}).items():
            for k, p in listed:
                if k < 1 or p < 1 or k * p != demand:
                    raise ValueError(
                        f"shape [{k}, {p}] for demand {demand}: nodes × GPUs per node must "
                        f"equal the demand"
                    )
        return shapes
