"""The one way a route hands its work to the solver processes: `post` declares the route (its
handler, its typed body and answer in the OpenAPI document) and `pooled` serves it: admission
before the body is read, the body within its limits, the work in a worker, logs, the answer.

A route module declares its endpoint once: its request model and the schema the document
gives its body, an `Endpoint` (read, limited, run: what a worker does), and one `post(...)`.
"""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog
from fastapi import APIRouter, Request, Response
from fastapi.responses import FileResponse
from pydantic import BaseModel
from starlette.background import BackgroundTask
from starlette.requests import ClientDisconnect

from apportion.api.body import read_body
from apportion.api.deps import PoolDep, SettingsDep
from apportion.api.media import JsonBody
from apportion.api.metrics import observe
from apportion.api.pool import SolvePool
from apportion.api.problems import Refused, problem
from apportion.api.settings import Settings
from apportion.api.worker import Endpoint, RenderedResponse

log = structlog.get_logger("apportion.request")
#: A request id the service takes from its client: short, and nothing a log or a header could
#: be confused by (a longer or stranger one is replaced by one of the service's own).
REQUEST_ID = re.compile(r"[A-Za-z0-9._:@/+=-]{1,128}")


@dataclass(frozen=True)
class Typed:
    """What the OpenAPI document says of a route's body and answer (`api.openapi`)."""

    body: Callable[[], tuple[type[BaseModel], ...]]  # one model, or the variants of a oneOf
    answer: type[BaseModel]
    says: str  # the 200 answer, in a few words
    example: dict[str, Any] | None = None  # a body the service answers 200 ("Try it out")


#: Every route declared with `post`, by its name; its operation in FastAPI's document carries
#: the name under this key (for `api.openapi`, which replaces it with the typed body).
TYPED: dict[str, Typed] = {}
MARK = "x-apportion-typed"


def post(
    router: APIRouter,
    path: str,
    endpoint: Endpoint[Any],
    typed: Typed,
    *,
    name: str,
    summary: str,
    description: str = "",
) -> None:
    """Declare POST `path` on `router`: its JSON body is read and `endpoint` run on it in a
    worker. `name` is the handler's (the operation's id); the log lines are called after the
    path; `summary` and `description` are the document's."""
    event = path.strip("/")

    async def handler(request: Request, settings: SettingsDep, pool: PoolDep) -> Response:
        return await pooled(request, settings, pool, endpoint, event)

    TYPED[name] = typed
    router.add_api_route(
        path,
        handler,
        methods=["POST"],
        name=name,
        summary=summary,
        description=description,
        dependencies=[JsonBody],
        openapi_extra={MARK: name},
    )


async def pooled(
    request: Request, settings: Settings, pool: SolvePool, task: Endpoint[Any], event: str
) -> Response:
    """Admit the request, read its body, run `task` on it in the worker pool, log and answer."""
    started = time.perf_counter()
    request_id = request_id_of(request)
    retry = {"Retry-After": str(settings.retry_after_seconds), "X-Request-ID": request_id}
    size = 0
    try:
        with pool.admitted(_declared(request, settings.max_body_bytes)) as ticket:
            body = await read_body(
                request,
                settings.max_body_bytes,
                settings.body_timeout,
                directory=pool.spool.dir,
                hold=ticket.hold,
            )
            size, read = body.size, time.perf_counter()
            try:
                answer = await pool.run(body.payload, request.is_disconnected, task)
            finally:
                body.discard()
    except Refused as refused:
        log.warning(refused.reason, request_id=request_id, body_bytes=size)
        return problem(503, refused.detail, headers=retry)
    except ClientDisconnect:
        log.info("abandoned", request_id=request_id, detail="the client left during its upload")
        return Response(status_code=499)
    except asyncio.CancelledError:
        # The server stopped waiting (its shutdown bound passed; the solve, if any, is ended):
        # answer rather than let the server send a bare 500.
        _uncancel()
        log.warning("stopped", request_id=request_id, body_bytes=size)
        detail = "the service stopped before this request was answered; retry elsewhere"
        return problem(503, detail, headers=retry)
    observe(answer.meta)
    sent = len(answer.body) if answer.path is None else Path(answer.path).stat().st_size
    log.info(
        event,
        request_id=request_id,
        http_status=answer.status_code,
        body_bytes=size,
        response_bytes=sent,
        read_seconds=round(read - started, 4),
        total_seconds=round(time.perf_counter() - started, 4),
        **answer.meta,
    )
    headers = retry if answer.status_code == 503 else {"X-Request-ID": request_id}
    return _respond(answer, headers)


def request_id_of(request: Request) -> str:
    """The client's `X-Request-ID` when it is a safe one, else a new one."""
    given = request.headers.get("x-request-id", "")
    return given if REQUEST_ID.fullmatch(given) else uuid.uuid4().hex


def _respond(answer: RenderedResponse, headers: dict[str, str]) -> Response:
    """The answer's bytes, or its spool file (removed once sent)."""
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


def _uncancel() -> None:
    current = asyncio.current_task()
    if current is not None:
        current.uncancel()


def _declared(request: Request, max_bytes: int) -> int | None:
    """The body's declared length, when it is one the service would read (`read_body` answers
    413 to a larger one before reading anything)."""
    declared = request.headers.get("content-length")
    if declared is None or not declared.isdigit() or int(declared) > max_bytes:
        return None
    return int(declared)
