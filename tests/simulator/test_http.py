"""Policy calls through the running service (POST /v1/solve), as a scheduler would make them:
the same decisions, so the same records, as solving in process."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pytest

from apportion.simulator.clients import ApportionPolicy, PolicyError, Request
from apportion.simulator.config import SimConfig
from apportion.simulator.engine import simulate
from apportion.simulator.sources import TraceSpec
from apportion.simulator.state import JobStates
from apportion.solver.result.table import JobTable
from tests.api.service import running_service


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with running_service(workers="1") as service:
        yield service.base


def test_a_simulation_over_http_matches_one_in_process(server: str) -> None:
    trace = TraceSpec("gavel", jobs=12).load_trace()
    local = simulate(trace, SimConfig())
    remote = simulate(trace, SimConfig(http=server))
    pd.testing.assert_frame_equal(local.records, remote.records, rtol=1e-9)
    assert remote.summary["policy_calls"] == local.summary["policy_calls"]
    assert remote.summary["policy_seconds"] > 0


def test_a_lease_simulation_over_http(server: str) -> None:
    trace = TraceSpec("chronus", jobs=15).load_trace()
    config = SimConfig(policy="deadline_admission", http=server)
    local = simulate(trace, SimConfig(policy="deadline_admission"))
    remote = simulate(trace, config)
    pd.testing.assert_frame_equal(local.records, remote.records, rtol=1e-9)


def test_the_services_422_is_an_input_error(server: str) -> None:
    trace = TraceSpec("gavel", jobs=3).load_trace()
    with pytest.raises(PolicyError, match="bogus") as raised:
        simulate(trace, SimConfig(http=server, options={"bogus": 1}))
    assert raised.value.invalid_input


def test_a_policy_answer_arrives_as_columns_in_process_and_over_http(
    server: str, gavel_physical: Any
) -> None:
    table = JobStates.from_trace(TraceSpec("gavel", jobs=3).load_trace())
    request = Request(table, np.arange(3), 0.0, lambda: gavel_physical)
    replies = []
    for http in (None, server):
        policy = ApportionPolicy("max_min_fairness", {}, http)
        replies.append(policy.decide(request))
        policy.close()
    local, remote = replies
    assert isinstance(local.columns, JobTable) and isinstance(remote.columns, JobTable)
    assert local.columns.ids == remote.columns.ids
    assert local.columns.allocation.tolist() == remote.columns.allocation.tolist()
    assert local.allocation == remote.allocation and local.metrics == remote.metrics
