"""POST /v1/solve: a snapshot in, an allocation out, solved in a worker process."""

from __future__ import annotations

import time
import uuid

import structlog
from fastapi import APIRouter, Request, Response

from api.body import read_body
from api.deps import pool_of, settings_of
from api.metrics import observe
from api.pool import Saturated
from api.problems import problem

router = APIRouter(prefix="/v1", tags=["solve"])
log = structlog.get_logger("apportion.request")


@router.post("/solve", summary="Solve a snapshot with a policy")
async def solve_snapshot(request: Request) -> Response:
    """The body is `{policy, snapshot, options}` (see the schema); the answer is the result
    document, or a problem (RFC 9457) naming what went wrong."""
    started = time.perf_counter()
    request_id = request.headers.get("x-request-id") or uuid.uuid4().hex
    settings = settings_of(request)
    body = await read_body(request, settings.max_body_bytes, settings.body_timeout)
    read = time.perf_counter()
    try:
        answer = await pool_of(request).run(body, request.is_disconnected)
    except Saturated:
        log.warning("saturated", request_id=request_id, body_bytes=len(body))
        return problem(
            503,
            "every solver is busy and the queue is full; retry later",
            headers={"Retry-After": str(settings.retry_after_seconds)},
        )
    observe(answer.meta)
    log.info(
        "solve",
        request_id=request_id,
        http_status=answer.status_code,
        body_bytes=len(body),
        response_bytes=len(answer.body),
        read_seconds=round(read - started, 4),
        total_seconds=round(time.perf_counter() - started, 4),
        **answer.meta,
    )
    return Response(
        answer.body, answer.status_code, {"X-Request-ID": request_id}, answer.media_type
    )
