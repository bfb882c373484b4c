"""Policy names a simulation accepts: every apportion policy (and alias), the baselines of
`simulator.baselines`, and `max_min_agnostic` (max-min fairness blind to GPU types)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simulator.baselines import ALIASES, KEYS, Baseline
from simulator.clients import ApportionPolicy, Decider

#: Named variants of apportion policies with fixed options.
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "max_min_agnostic": ("max_min_fairness", {"heterogeneity_aware": False}),
}


def check_policy(name: str) -> None:
    """Raises ValueError naming the choices when nothing knows `name`."""
    if name in KEYS or name in ALIASES or name in VARIANTS:
        return
    from solver.registry import find_policy

    if find_policy(name) is None:
        raise ValueError(f"unknown policy {name!r}; choose one of {', '.join(policy_names())}")


def make_decider(name: str, options: Mapping[str, Any], http: str | None = None) -> Decider:
    """The decider for `name`; raises ValueError for a name nothing knows."""
    check_policy(name)
    if name in KEYS or name in ALIASES:
        return Baseline(name, options)
    if name in VARIANTS:
        policy, fixed = VARIANTS[name]
        return ApportionPolicy(policy, {**fixed, **options}, http)
    return ApportionPolicy(name, options, http)


def policy_names() -> tuple[str, ...]:
    from solver.registry import NAMES

    return (*NAMES, *KEYS, *VARIANTS)
