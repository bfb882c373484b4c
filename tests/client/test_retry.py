"""503 from the real service (one solver, no queue, kept busy by a long solve): the clients
wait as `Retry-After` says and try again, and say so clearly once their retries run out."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys

import pytest

from apportion.client import (
    ApportionClient,
    AsyncApportionClient,
    ServiceUnavailable,
    ServiceUnreachable,
)
from apportion.solver import Status
from tests.api.service import ROOT, Service, free_port
from tests.client.busy import PROBE_SNAPSHOT, AsyncRecording, Recording, gaps, occupy
from tests.client.conftest import RETRY_AFTER


def test_saturated_without_retries_is_service_unavailable(service: Service) -> None:
    busy = occupy(service)
    with ApportionClient(service.base, retries=0) as api, pytest.raises(ServiceUnavailable) as no:
        api.solve(PROBE_SNAPSHOT)
    assert no.value.status == 503
    assert no.value.retry_after == RETRY_AFTER
    busy.join(timeout=60)


def test_sync_client_waits_retry_after_then_gets_its_answer(service: Service) -> None:
    busy = occupy(service)
    transport = Recording()
    with ApportionClient(service.base, retries=30, transport=transport) as api:
        result = api.solve(PROBE_SNAPSHOT)
    assert result.status is Status.OPTIMAL
    statuses = [status for _, status in transport.attempts]
    assert statuses[0] == 503 and statuses[-1] == 200 and set(statuses[:-1]) == {503}
    assert min(gaps(transport.attempts)) >= RETRY_AFTER * 0.95
    busy.join(timeout=60)


def test_async_client_waits_retry_after_then_gets_its_answer(service: Service) -> None:
    busy = occupy(service)
    transport = AsyncRecording()

    async def call() -> Status:
        async with AsyncApportionClient(service.base, retries=30, transport=transport) as api:
            return (await api.solve(PROBE_SNAPSHOT)).status

    assert asyncio.run(call()) is Status.OPTIMAL
    statuses = [status for _, status in transport.attempts]
    assert statuses[0] == 503 and statuses[-1] == 200
    assert min(gaps(transport.attempts)) >= RETRY_AFTER * 0.95
    busy.join(timeout=60)


def test_the_wait_is_capped_by_max_retry_wait(service: Service) -> None:
    busy = occupy(service)
    transport = Recording()
    api = ApportionClient(service.base, retries=2, max_retry_wait=0.2, transport=transport)
    with api, pytest.raises(ServiceUnavailable):
        api.solve(PROBE_SNAPSHOT)
    assert len(transport.attempts) == 3
    assert max(gaps(transport.attempts)) < RETRY_AFTER * 0.8
    busy.join(timeout=60)


def test_each_retry_against_a_dead_service_is_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    dead = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    caplog.set_level(logging.WARNING, logger="apportion.client")
    with (
        ApportionClient(dead, retries=2, max_retry_wait=0.05) as api,
        pytest.raises(ServiceUnreachable) as unreachable,
    ):
        api.policies()
    assert "after 3 attempts" in str(unreachable.value)
    said = [r.getMessage() for r in caplog.records if r.name == "apportion.client"]
    assert len(said) == 2 and all(r.levelno == logging.WARNING for r in caplog.records)
    for attempt, line in enumerate(said, start=1):
        assert line.startswith(f"GET /v1/policies: attempt {attempt} of 3 failed (ConnectError")
        assert "retrying in 0.05 s" in line


def test_a_program_without_logging_set_up_hears_each_retry_on_stderr() -> None:
    """As a user's script meets it: no logging configured, a closed port, the warnings on
    stderr, one per retry, with the attempt and the wait."""
    dead = f"http://127.0.0.1:{free_port()}"
    script = (
        "from apportion.client import ApportionClient\n"
        f"ApportionClient({dead!r}, retries=2, max_retry_wait=0.05).policies()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert done.returncode == 1 and "ServiceUnreachable" in done.stderr
    said = [line for line in done.stderr.splitlines() if "retrying in" in line]
    assert len(said) == 2, done.stderr
    for attempt, line in enumerate(said, start=1):
        assert f"attempt {attempt} of 3 failed (ConnectError" in line
        assert line.endswith("retrying in 0.05 s")
