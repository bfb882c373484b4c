"""POST /v1/rounds: the next round of Gavel's round-based mechanism, computed in a worker
process (from a given allocation, or from a policy solved on the way)."""

from __future__ import annotations

import time
from functools import cache
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.config import JsonDict, JsonValue

from apportion.api import examples
from apportion.api.dispatch import Typed, post
from apportion.api.openapi import NOT_NULL, NULL, policy_names
from apportion.api.worker import Done, Endpoint, Limited
from apportion.estimation.rounds import (
    Estimated,
    EstimatedRound,
    RoundsWithEstimate,
    parse_rounds_with_estimate,
    round_with_estimate,
)
from apportion.mechanism.document import RoundsInput

router = APIRouter(tags=["rounds"])

# What the server checks across fields, said in the schema (JSON Schema 2020-12): an
# `allocation` to enact (each pair with its fractions, no options), or a `policy` to compute it
# (pairs without fractions: they come from the policy's answer).
PAIRS_WITH: JsonDict = {
    "type": "array",
    "items": {"required": ["allocation"], "properties": {"allocation": NOT_NULL}},
}
PAIRS_WITHOUT: JsonDict = {"type": "array", "items": {"properties": {"allocation": NULL}}}
ALLOCATION_OR_POLICY: list[JsonValue] = [
    {
        "required": ["allocation"],
        "properties": {
            "allocation": NOT_NULL,
            "policy": NULL,
            "options": NULL,
            "pairs": PAIRS_WITH,
        },
    },
    {
        "required": ["policy"],
        "properties": {"policy": NOT_NULL, "allocation": NULL, "pairs": PAIRS_WITHOUT},
    },
]


@cache
def rounds_request() -> tuple[type[BaseModel]]:
    """The body in the OpenAPI document: `RoundsInput` with `policy` naming a policy or alias."""
    model: type[BaseModel] = create_model(
        "RoundsRequest",
        __base__=RoundsWithEstimate,
        __config__=ConfigDict(json_schema_extra={"oneOf": ALLOCATION_OR_POLICY}),
        __doc__="The next round for an `allocation`, or for the allocation `policy` computes "
        "(its options as POST /v1/solve documents them per policy).",
        policy=(
            policy_names() | None,
            Field(None, description="Compute the allocation with this policy."),
        ),
    )
    return (model,)


def _limited(given: RoundsInput | Estimated) -> Limited:
    # A round takes milliseconds to seconds: the service's default bound, then the policy's
    # limit when the request names one.
    request = given.request if isinstance(given, Estimated) else given
    return None if request.policy is None else (request.policy, request.options)


def _run(given: RoundsInput | Estimated, options: dict[str, Any] | None) -> Done:
    started = time.perf_counter()
    request = given.request if isinstance(given, Estimated) else given
    answer = round_with_estimate(given, options)
    meta = {
        "policy": f"rounds:{answer.policy or 'allocation'}",
        "status": answer.status.value if answer.status is not None else "round",
        "jobs": len(request.snapshot.jobs),
        "solve_seconds": time.perf_counter() - started,
    }
    return answer, meta


ROUNDS = Endpoint(parse_rounds_with_estimate, _limited, _run)
post(
    router,
    "/rounds",
    ROUNDS,
    Typed(rounds_request, EstimatedRound, "the next round", examples.ROUNDS),
    name="next_round",
    summary="The next round: which jobs run, on which nodes and GPUs",
    description="The body is `{snapshot, allocation | policy + options, received, previous, "
    "pairs, estimate}` (see the schema); the answer is the round (job → assignment, idle GPUs, "
    "waiting jobs with reasons, the allocation used), or a problem (RFC 9457) naming every bad "
    "field. With `estimate` (POST /v1/estimate's body: the document kept and the progress "
    "observed since), the round is computed on the estimated throughputs and the answer "
    "carries the updated document.",
)
