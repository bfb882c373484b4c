"""Shared fixtures: the bundled snapshot files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def load_fixture(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / name).read_text())


@pytest.fixture
def gavel_physical() -> dict[str, Any]:
    return load_fixture("gavel_physical_96.json")
