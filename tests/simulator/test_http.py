"""Policy calls through the running service (POST /v1/solve), as a scheduler would make them:
the same decisions, so the same records, as solving in process."""

from __future__ import annotations

from collections.abc import Iterator

import pandas as pd
import pytest

from apportion.simulator.clients import PolicyError
from apportion.simulator.config import SimConfig
from apportion.simulator.engine import simulate
from apportion.simulator.sources import TraceSpec
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
