"""POST /v1/solve: a snapshot in, an allocation out, solved in a worker process."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path

import structlog
from fastapi import APIRouter, Request, Response
from fastapi.responses import FileResponse
from starlette.background import BackgroundTask

from apportion.api.body import read_body
from apportion.api.deps import pool_of, settings_of
from apportion.api.metrics import observe
from apportion.api.pool import Saturated
from apportion.api.problems import problem
from apportion.api.worker import Answer, Limits, solve_body

router = APIRouter(prefix="/v1", tags=["solve"])
log = structlog.get_logger("apportion.request")


@router.post("/solve", summary="Solve a snapshot with a policy")
async def solve_snapshot(request: Request) -> Response:
    """The body is `{policy, snapshot, options}` (see the schema); the answer is the result
    document, or a problem (RFC 9457) naming what went wrong."""
    return await pooled(request, solve_body, "solve")


async def pooled(
    request: Request, task: Callable[[bytes | str, Limits], Answer], event: str
) -> Response:
    """Read the body, run `task` on it in the worker pool, log and answer (shared by every
    route whose work runs in a worker: /v1/solve, /v1/rounds)."""
    started = time.perf_counter()
    request_id = request.headers.get("x-request-id") or uuid.uuid4().hex
    settings = settings_of(request)
    body = await read_body(request, settings.max_body_bytes, settings.body_timeout)
    read = time.perf_counter()
    payload = body.data if body.data is not None else str(body.path)
    try:
        answer = await pool_of(request).run(payload, request.is_disconnected, task)
    except Saturated:
        log.warning("saturated", request_id=request_id, body_bytes=body.size)
        return problem(
            503,
            "every solver is busy and the queue is full; retry later",
            headers={"Retry-After": str(settings.retry_after_seconds)},
        )
    finally:
        body.discard()
    observe(answer.meta)
    sent = len(answer.body) if answer.path is None else Path(answer.path).stat().st_size
    log.info(
        event,
        request_id=request_id,
        http_status=answer.status_code,
        body_bytes=body.size,
        response_bytes=sent,
        read_seconds=round(read - started, 4),
        total_seconds=round(time.perf_counter() - started, 4),
        **answer.meta,
    )
    headers = {"X-Request-ID": request_id}
    if answer.path is not None:
        spooled = Path(answer.path)
        return FileResponse(
            spooled,
            answer.status_code,
            headers,
            answer.media_type,
            background=BackgroundTask(spooled.unlink, missing_ok=True),
        )
    return Response(answer.body, answer.status_code, headers, answer.media_type)
