"""Options every policy understands; policy-specific options live with each policy."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from solver.backends import DEFAULT_BACKEND, LpMethod


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
        "highs choose/simplex/ipm/pdlp; cvxpy CLARABEL (LP default), HIGHS (MILP default), SCS, "
        "SCIPY, ... as installed; pulp CBC (default) or HiGHS. GET /v1/policies lists them.",
    )
    lp_method: LpMethod = Field(
        LpMethod.AUTO, description="LP algorithm hint; auto = measured default."
    )
    time_limit: float | None = Field(
        None,
        gt=0,
        description="Seconds for the whole solve (every model the policy solves shares them).",
    )
    mip_gap: float | None = Field(None, ge=0, le=1, description="Relative MILP gap to stop at.")
    threads: int | None = Field(None, ge=1, description="Solver threads.")
    merge_identical: bool = Field(
        True,
        description="Merge jobs identical in (throughputs, scale factor, weight) before solving.",
    )
    verbose: bool = Field(False, description="Let the solver print its log to stderr.")


class PolicyOptions(BaseModel):
    """Base for each policy's own options (extra keys are an error, naming the key)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
