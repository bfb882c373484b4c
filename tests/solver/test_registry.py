"""Every registered policy is a leaf under the import contract: its module is named in the
"A policy module is a leaf" independence contract of pyproject.toml, which `lint-imports`
(run by tests/test_architecture.py) enforces, so no policy imports another."""

from __future__ import annotations

import importlib.util
import tomllib
from pathlib import Path
from typing import Any

from apportion.solver.registry import ENTRIES

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
LEAF_CONTRACT = "A policy module is a leaf"


def _leaf_contract() -> dict[str, Any]:
    contracts = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]["contracts"]
    (contract,) = [c for c in contracts if c["name"].startswith(LEAF_CONTRACT)]
    return dict(contract)


def test_the_leaf_contract_is_an_independence_contract() -> None:
    assert _leaf_contract()["type"] == "independence"


def test_every_registered_policy_module_is_a_leaf_in_the_contract() -> None:
    leaves = set(_leaf_contract()["modules"])
    registered = {entry.module for entry in ENTRIES}
    assert registered, "the registry names no policy"
    assert not registered - leaves, sorted(registered - leaves)


def test_the_contract_names_only_modules_that_exist() -> None:
    # A misspelt or removed module in the contract would guard nothing.
    missing = [m for m in _leaf_contract()["modules"] if importlib.util.find_spec(m) is None]
    assert not missing, missing
