"""Liveness (the process answers) and readiness (a solver answers)."""

from __future__ import annotations

from fastapi import APIRouter, Response, status

from solver import Status, solve

router = APIRouter(tags=["health"])

_PROBE = {
    "gpu_types": [{"name": "probe", "count": 1}],
    "jobs": [{"id": "probe", "throughput": {"probe": 1.0}}],
}


@router.get("/livez")
def livez() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/readyz")
def readyz(response: Response) -> dict[str, str]:
    ok = solve(_PROBE).status is Status.OPTIMAL
    if not ok:
        response.status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    return {"status": "ok" if ok else "solver unavailable"}
