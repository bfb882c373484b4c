"""`AsyncApportionClient` against the real service: the same types and errors as the sync
client, and concurrent calls on one client."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from apportion.client import AsyncApportionClient
from apportion.mechanism.document import RoundResult, parse_rounds, round_result
from apportion.solver import InputError, SolveResult, solve
from tests.api.service import Service
from tests.client.rounds_case import ROUNDS_REQUEST


def test_async_solve_rounds_and_policies(service: Service, gavel_physical: Any) -> None:
    async def calls() -> tuple[SolveResult, RoundResult, list[str]]:
        async with AsyncApportionClient(service.base) as api:
            result = await api.solve(gavel_physical, policy="makespan")
            rnd = await api.rounds(ROUNDS_REQUEST)
            names = (await api.policies()).names
        return result, rnd, names

    result, rnd, names = asyncio.run(calls())
    local = solve(gavel_physical, policy="makespan")
    assert type(result) is SolveResult and result.status == local.status
    assert result.objective == pytest.approx(local.objective, rel=1e-9)
    assert rnd == round_result(parse_rounds(ROUNDS_REQUEST))
    assert "makespan" in names


def test_concurrent_calls_share_one_client(service: Service, gavel_physical: Any) -> None:
    """More calls than the service takes at once (one solver, no queue): the 503s are retried
    and every call gets its own answer."""
    policies = ["max_min_fairness", "water_filling", "makespan", "finish_time_fairness"]

    async def calls() -> list[SolveResult]:
        async with AsyncApportionClient(service.base, retries=30, max_retry_wait=0.5) as api:
            return await asyncio.gather(*(api.solve(gavel_physical, p) for p in policies))

    results = asyncio.run(calls())
    assert [r.policy for r in results] == policies
    for result, policy in zip(results, policies, strict=True):
        assert result.objective == pytest.approx(solve(gavel_physical, policy).objective, rel=1e-6)


def test_async_bad_input_is_input_error(service: Service, gavel_physical: Any) -> None:
    bad = copy.deepcopy(gavel_physical)
    bad["jobs"][0]["id"] = bad["jobs"][1]["id"]

    async def call() -> None:
        async with AsyncApportionClient(service.base) as api:
            await api.solve(bad, policy="max_min_fairness")

    with pytest.raises(InputError) as remote:
        asyncio.run(call())
    with pytest.raises(InputError) as local:
        solve(bad, policy="max_min_fairness")
    assert [e.loc for e in remote.value.errors] == [e.loc for e in local.value.errors]
