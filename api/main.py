"""The FastAPI app: routers, the 422 handler for solver input errors, and /metrics."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from prometheus_client import make_asgi_app

from api.routes import health, policies, solve
from solver.errors import InputError

app = FastAPI(
    title="apportion",
    summary="Exact LP/MILP scheduling policies for GPU clusters.",
    version="0.1.0",
)
app.include_router(health.router)
app.include_router(policies.router)
app.include_router(solve.router)
app.mount("/metrics", make_asgi_app())


@app.exception_handler(InputError)
async def input_error(_: Request, exc: InputError) -> JSONResponse:
    return JSONResponse(status_code=422, content={"detail": [e.as_dict() for e in exc.errors]})


@app.exception_handler(RequestValidationError)
async def request_error(_: Request, exc: RequestValidationError) -> JSONResponse:
    # Same body shape as InputError, without echoing the (possibly 100,000-job) input back.
    detail = [
        {"loc": list(e["loc"]), "msg": e["msg"].removeprefix("Value error, "), "type": e["type"]}
        for e in exc.errors()
    ]
    return JSONResponse(status_code=422, content={"detail": detail})
