"""GET /v1/policies: what can be asked for, with each policy's options."""

from __future__ import annotations

from fastapi import APIRouter

from apportion.api.schemas import PolicyList
from apportion.solver.catalog import policy_catalog

router = APIRouter(tags=["policies"])


@router.get("/policies")
async def list_policies() -> PolicyList:
    return PolicyList.model_validate(policy_catalog())
