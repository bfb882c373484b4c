"""Field types shared by every part of the snapshot schema (one definition, one behaviour)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

Name = Annotated[str, StringConstraints(min_length=1, max_length=200, strip_whitespace=True)]
NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Positive = Annotated[float, Field(gt=0, allow_inf_nan=False)]
Finite = Annotated[float, Field(allow_inf_nan=False)]


class Strict(BaseModel):
    """Unknown keys are rejected (a typo must not silently change an answer); values frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
