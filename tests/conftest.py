"""Shared fixtures: the bundled snapshot files; property tests run the same examples every time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# Property tests draw the same examples on every run, so a suite that passed once passes on a
# fresh clone too (randomly drawn examples made a rare first-order-solver miss show up as a
# flaky failure). Explore new examples locally with --hypothesis-seed or another profile.
settings.register_profile("repeatable", derandomize=True, database=None)
settings.load_profile("repeatable")

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def load_fixture(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / name).read_text())


@pytest.fixture
def gavel_physical() -> dict[str, Any]:
    return load_fixture("gavel_physical_96.json")
