"""POST /v1/compare: what-if, two snapshots (or one and a patch) under one policy, solved in a
worker process within one time limit; the answer lists the per-job differences, largest
first. Advisory only."""

from __future__ import annotations

import time
from functools import cache
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.config import JsonValue

from apportion.api import examples
from apportion.api.dispatch import Typed, post
from apportion.api.openapi import NOT_NULL, NULL, policy_names
from apportion.api.worker import Done, Endpoint, Limited, validated
from apportion.solver.compare import Patch, compare
from apportion.solver.result import Comparison
from apportion.solver.snapshot import Snapshot

router = APIRouter(tags=["compare"])


class CompareBody(BaseModel):
    """`before`, and `after` or a `patch`, under one policy and options; the snapshots are
    checked by the pipeline."""

    model_config = ConfigDict(extra="forbid", strict=True)

    policy: str | None = None
    before: dict[str, Any]
    after: dict[str, Any] | None = None
    patch: dict[str, Any] | None = None
    options: dict[str, Any] | None = None


# `after` or `patch`, exactly one not null (the other absent or null), said in the schema.
EXACTLY_ONE_SIDE: list[JsonValue] = [
    {"required": [given], "properties": {given: NOT_NULL, other: NULL}}
    for given, other in (("after", "patch"), ("patch", "after"))
]


@cache
def compare_request() -> tuple[type[BaseModel]]:
    """The body in the OpenAPI document, its snapshots typed."""
    model: type[BaseModel] = create_model(
        "CompareRequest",
        __config__=ConfigDict(extra="forbid", json_schema_extra={"oneOf": EXACTLY_ONE_SIDE}),
        __doc__="Two snapshots, or one and a patch of it, solved under one policy with the "
        "same options (as POST /v1/solve documents them per policy).",
        policy=(
            policy_names() | None,
            Field(None, description="Default: the `before` snapshot's."),
        ),
        before=(Snapshot, ...),
        after=(Snapshot | None, Field(None, description="Give this or `patch`.")),
        patch=(Patch | None, Field(None, description="Changes to `before`.")),
        options=(dict[str, Any] | None, None),
    )
    return (model,)


def _read(data: Any) -> CompareBody:
    return validated(CompareBody, data)


def _limited(request: CompareBody) -> Limited:
    # Both sides share one time limit: compare is bounded like a solve.
    named = request.policy or request.before.get("policy")
    return (named if isinstance(named, str) else None), request.options


def _run(request: CompareBody, options: dict[str, Any] | None) -> Done:
    started = time.perf_counter()
    answer = compare(request.before, request.after, request.patch, request.policy, options)
    meta = {
        "policy": f"compare:{answer.policy}",
        "status": answer.status_after.value,
        "jobs": len(answer.jobs) + answer.unchanged,
        "solve_seconds": time.perf_counter() - started,
    }
    return answer, meta


COMPARE = Endpoint(_read, _limited, _run)
post(
    router,
    "/compare",
    COMPARE,
    Typed(compare_request, Comparison, "the differences", examples.COMPARE),
    name="compare_snapshots",
    summary="What-if: the per-job differences between two snapshots",
    description="The body is `{policy, before, after | patch, options}`: `before` and `after` "
    "are snapshots; a `patch` instead changes `before` (`gpus`: type → GPUs to add or, "
    "negative, remove; `add_jobs`; `remove_jobs`; `weights`: job id → weight). The answer has "
    "both objectives and their difference, GPU use per type, and the jobs whose allocation, "
    "share or throughput changed, largest first; it is advisory (each side is solved on its "
    "own). A bad field is a problem (RFC 9457) naming it, under `before`, `after`, `patch` or "
    "`options`; a side stopped before it found an allocation is said in `warnings`.",
)
