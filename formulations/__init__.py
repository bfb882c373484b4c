"""One module per policy; this registry is how the CLI, the API and Python find them."""

from __future__ import annotations

from formulations import (
    contention_placement,
    deadline_admission,
    fifo,
    finish_time_fairness,
    hierarchical,
    makespan,
    max_min_fairness,
    min_cost_slo,
    throughput,
    water_filling,
)
from solver.policy import Policy

DEFAULT_POLICY = max_min_fairness.POLICY.name

POLICIES: dict[str, Policy] = {
    p.name: p
    for p in (
        max_min_fairness.POLICY,
        water_filling.POLICY,
        hierarchical.POLICY,
        makespan.POLICY,
        finish_time_fairness.POLICY,
        throughput.MAX_THROUGHPUT,
        throughput.PER_DOLLAR,
        min_cost_slo.POLICY,
        fifo.POLICY,
        deadline_admission.POLICY,
        contention_placement.POLICY,
    )
}

_ALIASES = {alias: p.name for p in POLICIES.values() for alias in p.aliases}


def find_policy(name: str) -> Policy | None:
    """The policy called `name` (or one of its aliases), None if there is none."""
    key = name.strip().lower().replace("-", "_")
    return POLICIES.get(key) or POLICIES.get(_ALIASES.get(key, ""))
