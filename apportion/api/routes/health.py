"""Liveness (the process answers) and readiness (workers up, queue not full). Both run on the
event loop, never behind solves."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response, status

from apportion.api.deps import pool_of, settings_of

router = APIRouter(tags=["health"])


@router.get("/livez")
async def livez() -> dict[str, str]:
    return {"status": "ok"}


@router.get(
    "/readyz",
    responses={503: {"description": "saturated: every worker busy and the queue full"}},
)
async def readyz(request: Request, response: Response) -> dict[str, object]:
    load = pool_of(request).load
    answer: dict[str, object] = {
        "status": "ok",
        "workers": load.workers,
        "in_flight": load.admitted,
        "queued": load.queued,
        "capacity": load.capacity,
    }
    if load.saturated:
        response.status_code = status.HTTP_503_SERVICE_UNAVAILABLE
        response.headers["Retry-After"] = str(settings_of(request).retry_after_seconds)
        answer["status"] = "saturated"
    return answer
