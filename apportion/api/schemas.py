"""The HTTP API's own models, requests beside responses. The documents they carry are the
library's: snapshots (`solver.snapshot`), results (`solver.result`), rounds
(`mechanism.document`); the OpenAPI document types each body per policy (`api.openapi`)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class SolveBody(BaseModel):
    """POST /v1/solve: the request's outer shape; the snapshot and options are checked by the
    pipeline in a worker."""

    model_config = ConfigDict(extra="forbid", strict=True)

    policy: str | None = None
    snapshot: dict[str, Any]
    options: dict[str, Any] | None = None


class CompareBody(BaseModel):
    """POST /v1/compare: `before`, and `after` or a `patch`, under one policy and options."""

    model_config = ConfigDict(extra="forbid", strict=True)

    policy: str | None = None
    before: dict[str, Any]
    after: dict[str, Any] | None = None
    patch: dict[str, Any] | None = None
    options: dict[str, Any] | None = None


class PolicyInfo(BaseModel):
    name: str
    summary: str
    problem_class: str
    aliases: list[str]
    options: dict[str, Any] = Field(description="JSON Schema of the policy's own options.")


class PolicyList(BaseModel):
    policies: list[PolicyInfo]
    common_options: dict[str, Any] = Field(
        description="JSON Schema of the options every policy takes."
    )
    backends: list[str]
    solvers: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Each backend's own solvers available on this service (options.solver), "
        "default first.",
    )
