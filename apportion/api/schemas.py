"""The answer models of GET /v1/policies. The pooled routes declare their own request models
(`api.routes.solve`, `rounds`, `compare`); the documents they carry are the library's:
snapshots (`solver.snapshot`), results (`solver.result`), rounds (`mechanism.document`)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


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
