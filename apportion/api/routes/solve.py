"""POST /v1/solve: a snapshot in, an allocation out, solved in a worker process.

The body is `{policy, snapshot, options}`; the OpenAPI document types it per policy (one
variant each, with the options that policy takes), so that a generated client or a fuzzer
builds valid requests."""

from __future__ import annotations

import time
from functools import cache
from typing import Any, Literal

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field, create_model

from apportion.api import examples
from apportion.api.dispatch import Typed, post
from apportion.api.openapi import camel, options_model
from apportion.api.worker import Done, Endpoint, Limited, validated
from apportion.solver.errors import InputError
from apportion.solver.pipeline import checked_request, solve
from apportion.solver.registry import ENTRIES, all_policies
from apportion.solver.result import SolveResult
from apportion.solver.snapshot import Snapshot, parse_snapshot

router = APIRouter(tags=["solve"])


class SolveBody(BaseModel):
    """The request's outer shape; the snapshot and options are checked by the pipeline."""

    model_config = ConfigDict(extra="forbid", strict=True)

    policy: str | None = None
    snapshot: dict[str, Any]
    options: dict[str, Any] | None = None


@cache
def request_variants() -> tuple[type[BaseModel], ...]:
    """The body in the OpenAPI document: one model per policy, `policy` naming it (or an
    alias), and one without `policy` (the snapshot's own, else max-min fairness)."""
    policies = all_policies()
    variants = []
    for entry in ENTRIES:
        policy = policies[entry.name]
        names: Any = Literal[entry.names]
        variants.append(
            create_model(
                f"{camel(entry.name)}Request",
                __config__=ConfigDict(extra="forbid"),
                __doc__=policy.summary,
                policy=(names, Field(description="The policy (or one of its aliases).")),
                snapshot=(Snapshot, ...),
                options=_optional(options_model(entry.name, policy.options)),
            )
        )
    default = create_model(
        "SnapshotPolicyRequest",
        __config__=ConfigDict(extra="forbid"),
        __doc__="The policy named by the snapshot, else max_min_fairness.",
        policy=(None, Field(None, description="Absent or null: the snapshot's policy.")),
        snapshot=(Snapshot, ...),
        options=_optional(options_model("default", policies["max_min_fairness"].options)),
    )
    return (*variants, default)


def _optional(model: type[BaseModel]) -> Any:
    """A field of type `model | None`, absent by default."""
    return (model | None, Field(default=None))


def _read(data: Any) -> SolveBody:
    return validated(SolveBody, data)


def _limited(request: SolveBody) -> Limited:
    named = request.policy or request.snapshot.get("policy")
    return (named if isinstance(named, str) else None), request.options


def _run(request: SolveBody, options: dict[str, Any] | None) -> Done:
    started = time.perf_counter()
    snapshot = _parsed(request)
    # The decoded document is no longer needed: at a million jobs it is a gigabyte that would
    # otherwise stay alive through the solve and the rendering.
    request.snapshot = {}
    parsed = time.perf_counter() - started
    result = solve(snapshot, policy=request.policy, options=options)
    del snapshot  # the result is all that is needed now
    result.solver.validate_seconds += parsed
    result.solver.total_seconds += parsed
    meta = {
        "policy": result.policy,
        "status": result.status.value,
        "jobs": len(result.jobs),
        "solve_seconds": result.solver.total_seconds,
    }
    return result, meta


def _parsed(request: SolveBody) -> Snapshot:
    """The request's snapshot; when it is invalid, the problems of the policy and options are
    reported with its own (every field at once, as `solve` reports them)."""
    try:
        return parse_snapshot(request.snapshot)
    except InputError as exc:
        named = request.policy or request.snapshot.get("policy")
        checked = checked_request(named if isinstance(named, str) else None, request.options or {})
        more = checked.errors if isinstance(checked, InputError) else ()
        raise InputError([*exc.errors, *more]) from None


SOLVE = Endpoint(_read, _limited, _run)
post(
    router,
    "/solve",
    SOLVE,
    Typed(request_variants, SolveResult, "the result document", examples.SOLVE),
    name="solve_snapshot",
    summary="Solve a snapshot with a policy",
    description="The body is `{policy, snapshot, options}` (see the schema); the answer is the "
    "result document, or a problem (RFC 9457) naming what went wrong.",
)
