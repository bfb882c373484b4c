"""GET /v1/policies: what can be asked for, with each policy's options."""

from __future__ import annotations

from fastapi import APIRouter

from apportion.api.schemas import PolicyInfo, PolicyList
from apportion.solver.backends import AUTO, backend_names, get_backend
from apportion.solver.options import SolveOptions
from apportion.solver.registry import aliases, all_policies

router = APIRouter(tags=["policies"])


@router.get("/policies")
async def list_policies() -> PolicyList:
    return PolicyList(
        policies=[
            PolicyInfo(
                name=p.name,
                summary=p.summary,
                problem_class=p.problem_class,
                aliases=list(aliases(p.name)),
                options=p.options.model_json_schema(),
            )
            for p in all_policies().values()
        ],
        common_options=SolveOptions.model_json_schema(),
        backends=backend_names(),
        solvers={n: get_backend(n).available_solvers() for n in backend_names() if n != AUTO},
    )
