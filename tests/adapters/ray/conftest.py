"""The live Ray cluster the adapter's tests run against: started once per test session (three
raylets: n1, n2 with 8 V100 each, n3 with 8 K80; fake GPUs), stopped at the end; the tests are
skipped, with the reason, where Ray cannot be imported or started."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from apportion.adapters.ray.local.cluster import LocalRay, Unavailable, running


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[LocalRay]:
    try:
        context = running()
        cluster = context.__enter__()
    except Unavailable as exc:
        pytest.skip(f"no live Ray cluster: {exc}")
    try:
        yield cluster
    finally:
        context.__exit__(None, None, None)
