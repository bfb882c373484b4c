"""One error shape for every 4xx/5xx: RFC 9457 problem details (`application/problem+json`),
with the bad fields' locations in `errors`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson
from fastapi import Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException
from starlette.responses import Response

from apportion.solver.errors import FieldError

MEDIA_TYPE = "application/problem+json"
#: Echoed input is cut to this many characters (a 5 MB policy name is not sent back whole).
ECHO_CHARACTERS = 200
#: A problem lists this many bad fields at most, and counts the others (`errors_omitted`).
MAX_ERRORS = 100
TITLES = {
    400: "Malformed request body",
    404: "Not found",
    405: "Method not allowed",
    408: "Request too slow",
    413: "Request body too large",
    415: "Unsupported media type",
    422: "Invalid input",
    431: "Request headers too large",
    500: "Solver process failed",
    503: "Service saturated",
    504: "Solve stopped at its time limit",
}


class FieldProblem(BaseModel):
    loc: list[str | int] = Field(description="Where in the request body, from its root.")
    msg: str
    type: str


class Problem(BaseModel):
    """RFC 9457 problem details."""

    type: str = Field("about:blank", description="A URI naming the kind of problem.")
    title: str
    status: int
    detail: str
    errors: list[FieldProblem] = Field(
        default_factory=list,
        description=f"The bad fields, for 400 and 422 (the first {MAX_ERRORS}).",
    )
    errors_omitted: int = Field(
        0, description=f"Bad fields beyond the first {MAX_ERRORS}, not listed (absent: none)."
    )


class ProblemError(Exception):
    """Raised anywhere in the service to answer with a problem."""

    def __init__(
        self,
        status: int,
        detail: str,
        errors: list[dict[str, Any]] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.errors = errors or []
        self.headers = headers or {}


def problem_body(status: int, detail: str, errors: list[dict[str, Any]] | None = None) -> bytes:
    """The document; of `errors`, the first `MAX_ERRORS` and how many more."""
    errors = errors or []
    body = {
        "type": "about:blank",
        "title": TITLES.get(status, "Error"),
        "status": status,
        "detail": detail,
        "errors": errors[:MAX_ERRORS],
    }
    if len(errors) > MAX_ERRORS:
        body["errors_omitted"] = len(errors) - MAX_ERRORS
    return orjson.dumps(body)


def problem(
    status: int,
    detail: str,
    errors: list[dict[str, Any]] | None = None,
    headers: Mapping[str, str] | None = None,
) -> Response:
    return Response(problem_body(status, detail, errors), status, dict(headers or {}), MEDIA_TYPE)


def field_problems(
    errors: Sequence[FieldError], prefix: tuple[str, ...] = ("body",)
) -> list[dict[str, Any]]:
    return [{"loc": [*prefix, *e.loc], "msg": shorten(e.msg), "type": e.type} for e in errors]


def shorten(text: str) -> str:
    """At most `ECHO_CHARACTERS`, cut at a word boundary where there is one (a name cut in the
    middle reads as another name)."""
    if len(text) <= ECHO_CHARACTERS:
        return text
    cut = text[:ECHO_CHARACTERS]
    space = cut.rfind(" ")
    return (cut[:space] if space > ECHO_CHARACTERS // 2 else cut).rstrip(" ,;") + " …"


def summary(errors: list[dict[str, Any]]) -> str:
    first = errors[0]
    where = ".".join(str(part) for part in first["loc"][1:]) or "body"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{where}: {first['msg']}{more}"


async def on_problem(_: Request, exc: Exception) -> Response:
    assert isinstance(exc, ProblemError)
    return problem(exc.status, exc.detail, exc.errors, exc.headers)


async def on_validation(_: Request, exc: Exception) -> Response:
    """FastAPI's own checks (query parameters, a wrong content type): same shape, no echo."""
    assert isinstance(exc, RequestValidationError)
    errors = [
        {
            "loc": list(e["loc"]),
            "msg": shorten(str(e["msg"]).removeprefix("Value error, ")),
            "type": e["type"],
        }
        for e in exc.errors()
    ]
    return problem(422, summary(errors) if errors else "invalid request", errors)


async def on_crash(_: Request, exc: Exception) -> Response:
    """A defect in the service itself: still a problem document (the traceback goes to the
    log, never to the client)."""
    return problem(500, f"internal error in the service: {type(exc).__name__}")


async def on_http(_: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return problem(exc.status_code, shorten(str(exc.detail)), headers=exc.headers)


class Refused(Exception):
    """A request the service does not take now (saturated, over its upload budget, no room in
    its spool, no solver process running, shutting down): 503 with the service's Retry-After.
    The one class for every refusal, wherever it is raised."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason  # for logs and metrics
        self.detail = detail


async def on_refused(request: Request, exc: Exception) -> Response:
    """A refusal raised outside the routes' own handling: the same 503 and Retry-After."""
    assert isinstance(exc, Refused)
    retry = str(request.app.state.settings.retry_after_seconds)
    return problem(503, exc.detail, headers={"Retry-After": retry})
