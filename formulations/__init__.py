"""One module per policy; this registry is how the CLI, the API and Python find them."""

from __future__ import annotations

from formulations import contention_placement, max_min_fairness
from solver.policy import Policy

DEFAULT_POLICY = max_min_fairness.POLICY.name

POLICIES: dict[str, Policy] = {
    p.name: p for p in (max_min_fairness.POLICY, contention_placement.POLICY)
}

_ALIASES = {alias: p.name for p in POLICIES.values() for alias in p.aliases}


def find_policy(name: str) -> Policy | None:
    """The policy called `name` (or one of its aliases), None if there is none."""
    key = name.strip().lower().replace("-", "_")
    return POLICIES.get(key) or POLICIES.get(_ALIASES.get(key, ""))
