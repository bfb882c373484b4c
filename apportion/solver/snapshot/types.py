"""Field types shared by every part of the snapshot schema (one definition, one behaviour).

Every number the schema accepts is one the solvers represent, in one range:

* Real numbers are 0 or have a magnitude from `MIN_MAGNITUDE` (1e-12) to `MAX_MAGNITUDE` (1e15).
  Any product or quotient of a few such numbers (a throughput times a GPU count over a weight,
  a price times a duration, ...) then stays far from float overflow (~1e308) and from
  subnormals (< 2.2e-308), which the formulations' arithmetic would otherwise turn into
  infinities, NaNs or silent zeros. The top leaves five orders of magnitude below what HiGHS
  reads as infinite (1e20 for bounds and costs) for what a formulation multiplies in (merged job
  counts, GPU counts); below 2**53 ≈ 9e15 every whole number is exact, so absolute times in
  epoch seconds (~1.8e9) or milliseconds (~1.8e12) keep sub-second resolution. Real data sit far
  inside: Gavel's throughputs 0.3–700 steps/s, DeepShare's 6e4–6.5e9 samples, Philly's minutes.
* Counts (GPUs, scale factors, nodes) are whole numbers up to `MAX_COUNT` (1e9 GPUs, four orders
  of magnitude above the largest clusters): the product of two counts stays exact in int64 and
  every count is an exact, well-scaled matrix coefficient (HiGHS reads ≥ 1e15 as infinite).
* Types are strict: a count must be a JSON integer and a real a JSON number (an integer is
  accepted), never a string ("8", "inf") or a boolean; a flag must be true or false. A typo must
  not silently change an answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    StrictBool,
    StrictFloat,
    StrictInt,
    StringConstraints,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema

MAX_MAGNITUDE = 1e15
MIN_MAGNITUDE = 1e-12
MAX_COUNT = 1_000_000_000
MAX_NAME = 200


@dataclass(frozen=True)
class Magnitude:
    """Pydantic marker: after the field's own checks (type, sign), the value must be 0 (when
    `zero`) or have a magnitude from `MIN_MAGNITUDE` to `MAX_MAGNITUDE`, of either sign when
    `signed`. Checked in pydantic-core, not in Python: a 100,000-job snapshot holds ~10⁶ numbers.
    """

    zero: bool = True
    signed: bool = False

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        allowed: list[core_schema.CoreSchema | tuple[core_schema.CoreSchema, str]] = [
            core_schema.float_schema(ge=MIN_MAGNITUDE, le=MAX_MAGNITUDE)
        ]
        if self.signed:
            allowed.append(core_schema.float_schema(ge=-MAX_MAGNITUDE, le=-MIN_MAGNITUDE))
        if self.zero:
            allowed.append(core_schema.float_schema(ge=0, le=0))
        ranged = core_schema.custom_error_schema(
            core_schema.union_schema(allowed, mode="left_to_right"),
            custom_error_type="number_range",
            custom_error_message=self.text,
        )
        return core_schema.chain_schema([handler(source), ranged])

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        out = dict(handler(schema))
        out["maximum"] = min(out.get("maximum", MAX_MAGNITUDE), MAX_MAGNITUDE)
        if self.signed:
            out["minimum"] = max(out.get("minimum", -MAX_MAGNITUDE), -MAX_MAGNITUDE)
        elif not self.zero:
            out.pop("exclusiveMinimum", None)
            out["minimum"] = max(out.get("minimum", MIN_MAGNITUDE), MIN_MAGNITUDE)
        return out

    @property
    def text(self) -> str:
        span = f"{MIN_MAGNITUDE:g} to {MAX_MAGNITUDE:g}"
        if self.signed:
            return f"out of range: must be 0 or of magnitude {span}"
        return f"out of range: must be {'0 or ' if self.zero else ''}from {span}"


Name = Annotated[str, StringConstraints(min_length=1, max_length=MAX_NAME, strip_whitespace=True)]
Finite = Annotated[StrictFloat, Field(allow_inf_nan=False), Magnitude(signed=True)]
NonNegative = Annotated[StrictFloat, Field(ge=0, allow_inf_nan=False), Magnitude()]
Positive = Annotated[StrictFloat, Field(gt=0, allow_inf_nan=False), Magnitude(zero=False)]
#: A count that may be 0 (GPUs of a type) and one that may not (a scale factor, a node's GPUs).
Count = Annotated[StrictInt, Field(ge=0, le=MAX_COUNT)]
PositiveCount = Annotated[StrictInt, Field(ge=1, le=MAX_COUNT)]
Flag = StrictBool


class Strict(BaseModel):
    """Unknown keys are rejected (a typo must not silently change an answer); values frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
