"""The clients pass `explain` through and `compare` against the real service: the same
explanation and comparison as in process, bad patches located as the library locates them."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from apportion.client import ApportionClient, AsyncApportionClient, InputError
from apportion.solver import solve
from apportion.solver.compare import compare
from apportion.solver.result import Comparison
from tests.api.service import Service

SNAPSHOT: dict[str, Any] = {
    "gpu_types": [{"name": "v100", "count": 1}, {"name": "k80", "count": 3}],
    "jobs": [
        {"id": "a", "throughput": {"v100": 1}},
        {"id": "b", "throughput": {"v100": 1}},
        {"id": "c", "throughput": {"k80": 1}},
    ],
}


def test_explain_comes_back_as_in_process(service: Service) -> None:
    with ApportionClient(service.base) as api:
        remote = api.solve(SNAPSHOT, explain=True)
    local = solve(SNAPSHOT, explain=True)
    assert remote.explanation is not None and local.explanation is not None
    assert [(j.id, j.code, j.rows) for j in remote.explanation.jobs] == [
        (j.id, j.code, j.rows) for j in local.explanation.jobs
    ]
    assert [g.shadow_price for g in remote.explanation.gpu_types] == pytest.approx(
        [g.shadow_price for g in local.explanation.gpu_types]
    )


def test_compare_sync_and_async(service: Service) -> None:
    patch = {"gpus": {"v100": 1}}
    local = compare(SNAPSHOT, patch=patch)
    with ApportionClient(service.base) as api:
        remote = api.compare(SNAPSHOT, patch=patch)

    async def call() -> Comparison:
        async with AsyncApportionClient(service.base) as api:
            return await api.compare(SNAPSHOT, patch=patch, backend="highs")

    for answer in (remote, asyncio.run(call())):
        assert type(answer) is Comparison
        assert [j.id for j in answer.jobs] == [j.id for j in local.jobs]
        assert answer.objective_delta == pytest.approx(local.objective_delta)


def test_a_bad_patch_is_an_input_error_located_in_the_patch(service: Service) -> None:
    with ApportionClient(service.base) as api, pytest.raises(InputError) as raised:
        api.compare(SNAPSHOT, patch={"remove_jobs": ["nobody"]})
    assert [e.loc for e in raised.value.errors] == [("patch", "remove_jobs", "nobody")]
