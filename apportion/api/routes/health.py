"""Liveness (the process answers) and readiness (every worker warm and alive, queue not full,
not shutting down). Both run on the event loop, never behind solves."""

from __future__ import annotations

from fastapi import APIRouter, Response, status

from apportion.api.deps import PoolDep, SettingsDep

router = APIRouter(tags=["health"])


@router.get("/livez")
async def livez() -> dict[str, str]:
    return {"status": "ok"}


@router.get(
    "/readyz",
    responses={
        503: {
            "description": "not ready: a solver process is starting or being replaced "
            "(`recovering`), every worker busy and the queue full (`saturated`), or the "
            "service is shutting down (`shutting_down`)"
        }
    },
)
async def readyz(response: Response, settings: SettingsDep, pool: PoolDep) -> dict[str, object]:
    load = pool.load
    answer: dict[str, object] = {
        "status": "ok",
        "workers": load.workers,
        "workers_ready": pool.workers.ready,
        "in_flight": load.admitted,
        "queued": load.queued,
        "capacity": load.capacity,
    }
    if pool.workers.draining:
        answer["status"] = "shutting_down"
    elif not pool.ready:
        answer["status"] = "recovering"
    elif load.saturated:
        answer["status"] = "saturated"
    if answer["status"] != "ok":
        response.status_code = status.HTTP_503_SERVICE_UNAVAILABLE
        response.headers["Retry-After"] = str(settings.retry_after_seconds)
    return answer
