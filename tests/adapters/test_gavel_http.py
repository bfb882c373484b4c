"""The Gavel drop-in over HTTP, against the real service in a subprocess: the same allocations
as in process, the finish-time fairness history kept on the caller's side, errors located in
the caller's arguments."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from apportion.adapters.gavel import FinishTimeFairness, MaxMinFairnessSpaceSharing, get_policy
from apportion.client import ApportionClient
from apportion.solver import InputError
from tests.adapters.test_gavel import (
    CLUSTER,
    SCALE,
    WEIGHTS,
    JobId,
    assert_feasible,
    paired_throughputs,
    per_job,
    throughputs,
)
from tests.api.service import Service, running_service


@pytest.fixture(scope="module")
def service() -> Iterator[Service]:
    with running_service(workers="1") as running:
        yield running


@pytest.mark.parametrize(
    "name", ["max_min_fairness", "max_min_fairness_perf", "max_min_fairness_water_filling_perf"]
)
def test_over_http_the_allocation_is_the_in_process_one(service: Service, name: str) -> None:
    thr = throughputs()
    args = (thr, per_job(SCALE), per_job(WEIGHTS), CLUSTER)
    remote = get_policy(name, service_url=service.base)
    try:
        over_http = remote.get_allocation(*args)
    finally:
        remote.close()
    in_process = get_policy(name).get_allocation(*args)
    assert_feasible(over_http, thr)
    assert set(over_http) == set(in_process)
    for key, row in in_process.items():
        assert over_http[key] == pytest.approx(row, abs=1e-9)


def test_space_sharing_over_http(service: Service) -> None:
    thr = paired_throughputs()
    args = (thr, per_job(SCALE), per_job(WEIGHTS), CLUSTER)
    with ApportionClient(service.base) as api:
        over_http = MaxMinFairnessSpaceSharing(client=api).get_allocation(*args)
    in_process = MaxMinFairnessSpaceSharing().get_allocation(*args)
    assert any(over_http[k]["v100"] > 0 for k in thr if k.is_pair())
    for key, row in in_process.items():
        assert over_http[key] == pytest.approx(row, abs=1e-9)


def test_finish_time_fairness_history_over_http(service: Service) -> None:
    thr = throughputs()
    remote, local = FinishTimeFairness(service_url=service.base), FinishTimeFairness()
    for round_number, steps in enumerate((3000.0, 2500.0, 1800.0)):
        since = per_job([360.0 * round_number] * len(SCALE))
        args = (thr, per_job(SCALE), per_job(WEIGHTS), since, per_job([steps] * 8), CLUSTER)
        over_http, in_process = remote.get_allocation(*args), local.get_allocation(*args)
        for key, row in in_process.items():
            assert over_http[key] == pytest.approx(row, abs=1e-7)
    remote.close()
    assert remote.isolated_time_done == pytest.approx(local.isolated_time_done)
    assert min(remote.isolated_time_done.values()) > 0


def test_errors_over_http_name_the_callers_key(service: Service) -> None:
    thr = throughputs()
    thr[JobId(6)]["p100"] = -2.0
    remote = get_policy("max_min_fairness_perf", service_url=service.base)
    with pytest.raises(InputError) as caught:
        remote.get_allocation(thr, per_job(SCALE), per_job(WEIGHTS), CLUSTER)
    remote.close()
    assert [e.loc for e in caught.value.errors] == [("throughputs", "6", "p100")]
