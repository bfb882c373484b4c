"""POST /v1/solve: a snapshot in, an allocation out. The solve runs in the worker thread pool."""

from __future__ import annotations

from fastapi import APIRouter

from api.metrics import observe
from api.schemas import SolveRequest
from api.settings import settings
from solver import SolveResult, solve
from solver.errors import InputError

router = APIRouter(prefix="/v1", tags=["solve"])


@router.post("/solve", responses={422: {"description": "Invalid snapshot or options"}})
def solve_snapshot(request: SolveRequest) -> SolveResult:
    # A plain `def` endpoint: FastAPI runs it in its thread pool, off the event loop, and highspy
    # releases the GIL while it solves.
    limit = request.options.get("time_limit")
    if isinstance(limit, int | float) and limit > settings.max_time_limit:
        raise InputError.single(
            ("options", "time_limit"), f"at most {settings.max_time_limit:g} s on this service"
        )
    result = solve(request.snapshot, policy=request.policy, options=request.options)
    observe(result)
    return result
