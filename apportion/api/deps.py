"""What routes share: the settings and the solver pool (started on first use)."""

from __future__ import annotations

from fastapi import FastAPI, Request

from apportion.api.pool import SolvePool
from apportion.api.settings import Settings


def settings_of(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def pool_of(request: Request) -> SolvePool:
    return ensure_pool(request.app)


def ensure_pool(app: FastAPI) -> SolvePool:
    pool: SolvePool | None = getattr(app.state, "pool", None)
    if pool is None:
        pool = app.state.pool = SolvePool(app.state.settings)
    return pool
