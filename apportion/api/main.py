"""The FastAPI app: routers, one problem shape for every error, offline docs, the solver pool's
lifetime, and structured logs."""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import structlog
from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.openapi.utils import get_openapi
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException
from swagger_ui_bundle import swagger_ui_path

from apportion.api import openapi
from apportion.api.problems import ProblemError, on_http, on_problem, on_validation
from apportion.api.routes import compare, health, metrics, policies, rounds, solve
from apportion.api.settings import Settings

SOLVE_PATHS = ["/v1/solve"]
ROUNDS_PATHS = ["/v1/rounds"]
COMPARE_PATHS = ["/v1/compare"]


def configure_logging(level: str) -> None:
    """One JSON object per line on stderr: request id, policy, status, sizes, durations."""
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso"),
            structlog.processors.JSONRenderer(),
        ],
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.getLevelNamesMapping().get(level.upper(), logging.INFO)
        ),
    )


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    configure_logging(settings.log_level)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        pool = getattr(app.state, "pool", None)
        if pool is not None:
            app.state.pool = None  # a later request (a restarted app in tests) starts a new one
            pool.close(timeout=settings.max_time_limit + settings.stop_grace_seconds)

    app = FastAPI(
        title="apportion",
        summary="Exact LP/MILP scheduling policies for GPU clusters.",
        version="0.1.0",
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.settings = settings
    routers = (health, metrics, policies, solve, rounds, compare)
    for module in routers:
        app.include_router(module.router)
    app.add_exception_handler(ProblemError, on_problem)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(HTTPException, on_http)
    _offline_docs(app)

    def document() -> dict[str, Any]:
        if app.openapi_schema is None:
            base = get_openapi(
                title=app.title, version=app.version, summary=app.summary, routes=app.routes
            )
            app.openapi_schema = openapi.document(base, SOLVE_PATHS, ROUNDS_PATHS, COMPARE_PATHS)
        return app.openapi_schema

    app.openapi = document  # type: ignore[method-assign]
    return app


def _offline_docs(app: FastAPI) -> None:
    """Swagger UI from the installed bundle, so /docs works without internet access."""
    app.mount("/static/swagger-ui", StaticFiles(directory=swagger_ui_path), name="swagger-ui")

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url="/openapi.json",
            title="apportion — API",
            swagger_js_url="/static/swagger-ui/swagger-ui-bundle.js",
            swagger_css_url="/static/swagger-ui/swagger-ui.css",
            swagger_favicon_url="/static/swagger-ui/favicon-32x32.png",
        )


app = create_app()
