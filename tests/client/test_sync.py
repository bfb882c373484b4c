"""`ApportionClient` against the real service: the library's own types come back, equal to an
in-process solve; bad input raises the library's `InputError` with the library's locations."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from apportion.client import ApportionClient, PolicyCatalog, ServiceUnreachable
from apportion.mechanism.document import RoundResult, parse_rounds, round_result
from apportion.solver import InputError, SolveResult, parse_snapshot, solve
from apportion.solver.registry import all_policies
from tests.api.service import Service, free_port
from tests.client.rounds_case import ROUNDS_REQUEST


def _same_answer(remote: SolveResult, local: SolveResult) -> None:
    assert type(remote) is SolveResult
    assert remote.status == local.status
    assert remote.objective == pytest.approx(local.objective, rel=1e-9)
    assert [j.id for j in remote.jobs] == [j.id for j in local.jobs]
    for mine, theirs in zip(remote.jobs, local.jobs, strict=True):
        assert mine.allocation == pytest.approx(theirs.allocation, abs=1e-9)
        assert mine.metrics.keys() == theirs.metrics.keys()
    assert remote.summary.keys() == local.summary.keys()


def test_solve_returns_the_library_result(service: Service, gavel_physical: Any) -> None:
    with ApportionClient(service.base) as api:
        remote = api.solve(gavel_physical, policy="water_filling")
    _same_answer(remote, solve(gavel_physical, policy="water_filling"))
    assert remote.job(remote.jobs[0].id).metrics["level"] is not None


def test_solve_takes_a_parsed_snapshot_and_options(service: Service, gavel_physical: Any) -> None:
    snapshot = parse_snapshot(gavel_physical)
    with ApportionClient(service.base) as api:
        remote = api.solve(snapshot, "max_min_fairness", {"time_limit": 20}, backend="highs")
    _same_answer(remote, solve(gavel_physical, policy="max_min_fairness", backend="highs"))
    assert remote.solver.backend == "highs"


def test_bad_input_raises_input_error_with_the_library_locations(
    service: Service, gavel_physical: Any
) -> None:
    bad = copy.deepcopy(gavel_physical)
    bad["jobs"][3]["throughput"]["v100"] = -1.0
    bad["jobs"][5]["scale_factor"] = 0
    with pytest.raises(InputError) as local:
        solve(bad)
    with ApportionClient(service.base) as api, pytest.raises(InputError) as remote:
        api.solve(bad)
    locs = [e.loc for e in remote.value.errors]
    assert locs == [e.loc for e in local.value.errors]
    assert ("snapshot", "jobs", 3, "throughput", "v100") in locs
    assert ("snapshot", "jobs", 5, "scale_factor") in locs


def test_the_service_limits_are_input_errors_too(service: Service) -> None:
    snapshot = {"gpu_types": [{"name": "g", "count": 1}], "jobs": []}
    with ApportionClient(service.base) as api, pytest.raises(InputError) as caught:
        api.solve(snapshot, options={"time_limit": 10_000})
    assert [e.loc for e in caught.value.errors] == [("options", "time_limit")]
    assert "options.time_limit" in str(caught.value)


def test_rounds_returns_the_mechanism_round(service: Service) -> None:
    with ApportionClient(service.base) as api:
        remote = api.rounds(ROUNDS_REQUEST)
        typed = api.rounds(parse_rounds(ROUNDS_REQUEST))
    local = round_result(parse_rounds(ROUNDS_REQUEST))
    assert type(remote) is RoundResult
    assert remote == local
    assert typed == local
    assert remote.assignments["job0"].gpu_type == "p100"  # the talk's example


def test_rounds_bad_field_is_located(service: Service) -> None:
    request: dict[str, Any] = {**ROUNDS_REQUEST, "received": {"nobody": {"v100": 1.0}}}
    with ApportionClient(service.base) as api, pytest.raises(InputError) as caught:
        api.rounds(request)
    assert ("received", "nobody") in [e.loc for e in caught.value.errors]


def test_policies_lists_the_registry(service: Service) -> None:
    with ApportionClient(service.base) as api:
        catalog = api.policies()
    assert isinstance(catalog, PolicyCatalog)
    assert catalog.names == list(all_policies())
    assert catalog.get("deepshare").name == "contention_placement"
    assert "heterogeneity_aware" in catalog.get("max_min_fairness").options["properties"]
    assert "highs" in catalog.backends


def test_no_service_is_service_unreachable_after_the_retries() -> None:
    api = ApportionClient(f"http://127.0.0.1:{free_port()}", retries=2, max_retry_wait=0.05)
    with api, pytest.raises(ServiceUnreachable, match="after 3 attempts"):
        api.policies()


def test_what_cannot_be_sent_is_a_clear_error() -> None:
    with ApportionClient("http://127.0.0.1:1") as api:
        with pytest.raises(TypeError, match="cannot be sent as JSON"):
            api.solve({"gpu_types": [{"name": "g", "count": object()}]})
        with pytest.raises(TypeError, match="must be a mapping"):
            api.solve([1, 2])  # type: ignore[arg-type]
