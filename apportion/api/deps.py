"""What routes share, declared once as `Annotated` dependencies: the settings and the solver
pool (started with the server, or on first use by an app that was not started). Handlers take
`SettingsDep` and `PoolDep` parameters and never reach into `app.state` themselves."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, FastAPI, Request

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


SettingsDep = Annotated[Settings, Depends(settings_of)]
PoolDep = Annotated[SolvePool, Depends(pool_of)]
