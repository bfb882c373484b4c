"""The FastAPI app: routers, one problem shape for every error, offline docs, the solver pool's
lifetime, and structured logs."""

from __future__ import annotations

import logging
import sys
from importlib.resources import files
from typing import Any

import structlog
from fastapi import APIRouter, FastAPI
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.openapi.utils import get_openapi
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException

from apportion.api import openapi
from apportion.api.lifecycle import pool_lifespan
from apportion.api.problems import (
    ProblemError,
    Refused,
    on_crash,
    on_http,
    on_problem,
    on_refused,
    on_validation,
)
from apportion.api.routes import compare, estimate, health, metrics, policies, rounds, solve
from apportion.api.settings import Settings

#: The API's version, applied once to every versioned route (health and metrics stand outside).
VERSION = "/v1"


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

    app = FastAPI(
        title="apportion",
        summary="Exact LP/MILP scheduling policies for GPU clusters.",
        version="0.1.0",
        docs_url=None,
        redoc_url=None,
        lifespan=pool_lifespan(settings),
    )
    app.state.settings = settings
    versioned = APIRouter(prefix=VERSION)
    for module in (policies, solve, rounds, compare, estimate):
        versioned.include_router(module.router)
    app.include_router(versioned)
    for module in (health, metrics):
        app.include_router(module.router)
    app.add_exception_handler(ProblemError, on_problem)
    app.add_exception_handler(Refused, on_refused)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(HTTPException, on_http)
    app.add_exception_handler(Exception, on_crash)
    _offline_docs(app)

    def document() -> dict[str, Any]:
        if app.openapi_schema is None:
            base = get_openapi(
                title=app.title, version=app.version, summary=app.summary, routes=app.routes
            )
            app.openapi_schema = openapi.document(base)
        return app.openapi_schema

    app.openapi = document  # type: ignore[method-assign]
    return app


#: Swagger UI 5 (it reads OpenAPI 3.1, the version of the app's document), as installed.
SWAGGER_UI = files("fastapi_swagger") / "resources"


def _offline_docs(app: FastAPI) -> None:
    """Swagger UI from the installed package: /docs needs no internet access and makes no
    request beyond this service (no CDN, and no validator: Swagger UI would otherwise send
    the document to an outside validator whenever it is served from a name other than
    localhost)."""
    app.mount("/static/swagger-ui", StaticFiles(directory=str(SWAGGER_UI)), name="swagger-ui")

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url="/openapi.json",
            title="apportion — API",
            swagger_js_url="/static/swagger-ui/swagger-ui-bundle.js",
            swagger_css_url="/static/swagger-ui/swagger-ui.css",
            swagger_favicon_url="/static/swagger-ui/favicon-32x32.png",
            swagger_ui_parameters={"validatorUrl": None},
        )


app = create_app()
