"""POST /v1/compare: what-if, two snapshots (or one and a patch) under one policy, solved in a
worker process; the answer lists the per-job differences, largest first. Advisory only."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from apportion.api.deps import PoolDep, SettingsDep
from apportion.api.media import JsonBody
from apportion.api.routes.solve import pooled
from apportion.api.worker import compare_body

router = APIRouter(tags=["compare"], dependencies=[JsonBody])


@router.post("/compare", summary="What-if: the per-job differences between two snapshots")
async def compare_snapshots(request: Request, settings: SettingsDep, pool: PoolDep) -> Response:
    """The body is `{policy, before, after | patch, options}`: `before` and `after` are
    snapshots; a `patch` instead changes `before` (`gpus`: type → GPUs to add or, negative,
    remove; `add_jobs`; `remove_jobs`; `weights`: job id → weight). The answer has both
    objectives and their difference, GPU use per type, and the jobs whose allocation, share or
    throughput changed, largest first; it is advisory (each side is solved on its own). A bad
    field is a problem (RFC 9457) naming it, under `before`, `after`, `patch` or `options`."""
    return await pooled(request, settings, pool, compare_body, "compare")
