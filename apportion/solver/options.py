"""Options every policy understands; policy-specific options live with each policy.

Values are strict, as in the snapshot: `"inf"`, `"5"` or `true` where a number is expected is an
error naming the option, never a silent conversion.
"""

from __future__ import annotations

import os
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    field_validator,
)

from apportion.solver.backends import DEFAULT_BACKEND, LpMethod
from apportion.solver.snapshot.types import Positive

#: Solver threads beyond the machine's CPUs only cost: HiGHS starts one OS thread per requested
#: thread, process-wide, and aborts the process when it cannot create them.
MAX_THREADS = os.cpu_count() or 1


class SolveOptions(BaseModel):
    """Backend choice and limits. Unknown keys are passed on to the policy's own options."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    backend: str = Field(
        DEFAULT_BACKEND,
        description="Solver backend: auto (chosen per model by measurement), highs, clarabel, "
        "cvxpy or pulp.",
    )
    solver: str | None = Field(
        None,
        description="The backend's own solver (needs an explicit backend; case-insensitive): "
        "highs choose (default; the only one for MILPs), simplex, ipm, pdlp; cvxpy CLARABEL "
        "(LP default), HIGHS (MILP default), SCS (LP only), SCIPY, and GUROBI or COPT where "
        "installed; pulp CBC (default) or HiGHS. Anything else, or a solver that cannot solve "
        "the policy's problem class, is refused naming the alternatives. GET /v1/policies "
        "lists those installed.",
    )
    lp_method: LpMethod = Field(
        LpMethod.AUTO, description="LP algorithm hint; auto = measured default."
    )
    time_limit: Positive | None = Field(
        None,
        description="Seconds for the whole solve (every model the policy solves shares them).",
    )
    clock: Literal["wall", "work"] = Field(
        "wall",
        description="What `time_limit` counts: `wall`, seconds on the clock; `work`, modelled "
        "seconds of counted solver work (iterations and branch-and-bound nodes at fixed rates), "
        "so the answer is the same on any machine under any load (the simulator's choice).",
    )
    mip_gap: StrictFloat | None = Field(
        None, ge=0, le=1, allow_inf_nan=False, description="Relative MILP gap to stop at."
    )
    threads: StrictInt | None = Field(
        None,
        ge=1,
        json_schema_extra={"maximum": MAX_THREADS},
        description="Solver threads: 1 to the machine's CPU count (os.cpu_count(), "
        f"{MAX_THREADS} here); unset = each solver's default.",
    )
    merge_identical: StrictBool = Field(
        True,
        description="Merge jobs identical in (throughputs, scale factor, weight) before solving.",
    )
    verbose: StrictBool = Field(False, description="Let the solver print its log to stderr.")
    explain: StrictBool = Field(
        False,
        description="Add an `explanation` block: per GPU type whether it binds and its shadow "
        "price, per job what holds it where it is (docs/EXPLANATIONS.md).",
    )
    jobs_layout: Literal["rows", "columns"] | None = Field(
        None,
        description="How the result writes its jobs: `rows`, a list of job objects, or "
        "`columns`, one array per field with an entry per job (for large snapshots). Unset: "
        "the layout the snapshot's jobs came in.",
    )

    @field_validator("threads")
    @classmethod
    def _within_the_machine(cls, value: int | None) -> int | None:
        if value is not None and value > MAX_THREADS:
            raise ValueError(f"at most {MAX_THREADS}, the CPU count of this machine (got {value})")
        return value


class PolicyOptions(BaseModel):
    """Base for each policy's own options (extra keys are an error, naming the key)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True, strict=True)
