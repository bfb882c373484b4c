"""One real service for the client tests (uvicorn in a subprocess, as a user starts it) with a
single solver process and no queue, so that one long solve saturates it (503 + Retry-After)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.api.service import Service, running_service

RETRY_AFTER = 1


@pytest.fixture(scope="package")
def service() -> Iterator[Service]:
    settings = {
        "workers": "1",
        "queue_size": "0",
        "retry_after_seconds": str(RETRY_AFTER),
        "stop_grace_seconds": "2",
    }
    with running_service(**settings) as running:
        yield running
