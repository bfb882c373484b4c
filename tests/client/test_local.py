"""One interface, two places: the same call on `LocalClient` (in process) and on
`ApportionClient` (the real service in a subprocess) gives the same answer, of the same type,
and the same errors with the same field locations."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from apportion.client import ApportionClient, Client, LocalClient, connect
from apportion.estimation import EstimateDocument
from apportion.estimation.rounds import EstimatedRound
from apportion.mechanism.document import RoundResult
from apportion.solver import InputError, SolveResult, parse_snapshot
from apportion.solver.result import Comparison
from tests.api.service import Service
from tests.client.rounds_case import ROUNDS_REQUEST

#: What differs between two runs of the same solve: how long it took, and where.
TIMINGS = {"solver"}


@pytest.fixture
def both(service: Service) -> Iterator[tuple[Client, Client]]:
    with connect() as local, connect(service.base) as remote:
        yield local, remote


def _answer(result: SolveResult) -> dict[str, Any]:
    return result.model_dump(mode="json", exclude=TIMINGS)


def test_connect_chooses_the_place_and_both_are_clients(service: Service) -> None:
    local, remote = connect(), connect(service.base, retries=1)
    assert isinstance(local, LocalClient) and local.local and local.where == "in process"
    assert isinstance(remote, ApportionClient) and not remote.local
    assert remote.where == service.base
    remote.close()
    with pytest.raises(TypeError, match="retries"):
        connect(retries=1)


@pytest.mark.parametrize("layout", ["rows", "columns"])
def test_solve_gives_the_same_answer_in_process_and_over_http(
    both: tuple[Client, Client], gavel_physical: Any, layout: str
) -> None:
    local, remote = both
    options = {"jobs_layout": layout, "backend": "highs"}
    here = local.solve(gavel_physical, "water_filling", options)
    there = remote.solve(gavel_physical, "water_filling", options)
    assert type(here) is type(there) is SolveResult
    assert _answer(here) == _answer(there)
    assert here.status.value == "optimal"
    # A parsed snapshot is taken by both as it is by the library.
    parsed = parse_snapshot(gavel_physical)
    assert _answer(local.solve(parsed, "water_filling", options)) == _answer(here)


def test_compare_gives_the_same_comparison(
    both: tuple[Client, Client], gavel_physical: Any
) -> None:
    local, remote = both
    patch = {"gpus": {"v100": 4}}
    here = local.compare(gavel_physical, patch=patch, policy="max_min_fairness", backend="highs")
    there = remote.compare(gavel_physical, patch=patch, policy="max_min_fairness", backend="highs")
    assert type(here) is type(there) is Comparison
    assert here == there
    assert here.jobs, "fewer V100s changes some job's answer"


def test_rounds_gives_the_same_round(both: tuple[Client, Client]) -> None:
    local, remote = both
    here, there = local.rounds(ROUNDS_REQUEST), remote.rounds(ROUNDS_REQUEST)
    assert type(here) is type(there) is RoundResult
    assert here == there
    assert here.assignments["job0"].gpu_type == "p100"  # the talk's example
    solved = {k: v for k, v in ROUNDS_REQUEST.items() if k != "allocation"}
    solved["policy"] = "max_min_fairness"
    assert local.rounds(solved) == remote.rounds(solved)


def test_estimate_gives_the_same_document_and_takes_it_back(
    both: tuple[Client, Client],
) -> None:
    local, remote = both
    jobs = [
        {"id": "known", "job_type": "LM (batch size 20)"},
        {"id": "new", "profiles": {"k80": 3.0}},
    ]
    here, there = local.estimate({"jobs": jobs}), remote.estimate({"jobs": jobs})
    assert type(here) is type(there) is EstimateDocument
    assert here == there
    # The caller keeps the document and sends it back with what it saw: the service answers
    # from the evidence it is given, as the library does.
    seen = [{"job": "new", "gpu_type": "v100", "steps": 3600.0, "seconds": 360.0}]
    later = remote.estimate({"estimate": there, "observations": seen})
    assert later == local.estimate({"estimate": here, "observations": seen})
    before, after = there.jobs["new"].throughput["v100"], later.jobs["new"].throughput["v100"]
    assert after.sigma < before.sigma and after.mean == pytest.approx(10.0, rel=0.01)
    assert later.observed[0].steps == 3600.0
    # A round with an estimate: the same round and the same updated document both ways.
    seen = [{"job": "job0", "gpu_type": "v100", "steps": 360.0, "seconds": 360.0}]
    request = {**ROUNDS_REQUEST, "estimate": {"jobs": [{"id": "job0"}], "observations": seen}}
    round_here, round_there = local.rounds(request), remote.rounds(request)
    assert type(round_here) is type(round_there) is EstimatedRound
    assert round_here == round_there and round_there.estimate is not None


def test_policies_are_the_same_catalog(both: tuple[Client, Client]) -> None:
    local, remote = both
    assert local.policies() == remote.policies()


def test_bad_input_is_the_same_input_error(
    both: tuple[Client, Client], gavel_physical: Any
) -> None:
    bad = copy.deepcopy(gavel_physical)
    bad["jobs"][3]["throughput"]["v100"] = -1.0
    located = []
    for client in both:
        with pytest.raises(InputError) as caught:
            client.solve(bad)
        located.append([e.loc for e in caught.value.errors])
        with pytest.raises(InputError) as caught:
            client.rounds({**ROUNDS_REQUEST, "received": {"nobody": {"v100": 1.0}}})
        located.append([e.loc for e in caught.value.errors])
        with pytest.raises(InputError) as caught:
            client.estimate({"jobs": [{"id": "j", "profiles": {"a100": 1.0}}]})
        located.append([e.loc for e in caught.value.errors])
    assert located[2] == located[5] == [("jobs", 0, "profiles", "a100")]
    del located[2], located[4]
    assert located[0] == located[2] == [("snapshot", "jobs", 3, "throughput", "v100")]
    assert located[1] == located[3] == [("received", "nobody")]
