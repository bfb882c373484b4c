"""POST /v1/rounds: the next round of Gavel's round-based mechanism, computed in a worker
process (from a given allocation, or from a policy solved on the way)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from apportion.api.deps import PoolDep, SettingsDep
from apportion.api.media import JsonBody
from apportion.api.routes.solve import pooled
from apportion.api.worker import rounds_body

router = APIRouter(tags=["rounds"], dependencies=[JsonBody])


@router.post("/rounds", summary="The next round: which jobs run, on which nodes and GPUs")
async def next_round(request: Request, settings: SettingsDep, pool: PoolDep) -> Response:
    """The body is `{snapshot, allocation | policy + options, received, previous, pairs}` (see
    the schema); the answer is the round (job → assignment, idle GPUs, waiting jobs with
    reasons, the allocation used), or a problem (RFC 9457) naming every bad field."""
    return await pooled(request, settings, pool, rounds_body, "round")
