"""Policy names a simulation accepts: every apportion policy (and alias), the baselines of
`simulator.baselines`, and heterogeneity-agnostic variants: `max_min_agnostic` (max-min
fairness with `heterogeneity_aware=false`), `makespan_agnostic` and
`finish_time_fairness_agnostic` (the policy shown every job at one speed, see
`simulator.clients.TypeBlindPolicy`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apportion.simulator.baselines import ALIASES, KEYS, Baseline
from apportion.simulator.clients import ApportionPolicy, Decider, TypeBlindPolicy

#: Named variants of apportion policies with fixed options.
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "max_min_agnostic": ("max_min_fairness", {"heterogeneity_aware": False}),
}
#: Heterogeneity-agnostic versions of policies that have no `heterogeneity_aware` option (Gavel's
#: agnostic baselines): the policy sees each job at one speed on every type it can use.
TYPE_BLIND: dict[str, str] = {
    "makespan_agnostic": "makespan",
    "finish_time_fairness_agnostic": "finish_time_fairness",
}


def check_policy(name: str) -> None:
    """Raises ValueError naming the choices when nothing knows `name`."""
    if name in KEYS or name in ALIASES or name in VARIANTS or name in TYPE_BLIND:
        return
    from apportion.solver.registry import find_policy

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
    if name in TYPE_BLIND:
        return TypeBlindPolicy(TYPE_BLIND[name], options, http)
    return ApportionPolicy(name, options, http)


def policy_names() -> tuple[str, ...]:
    from apportion.solver.registry import NAMES

    return (*NAMES, *KEYS, *VARIANTS, *TYPE_BLIND)
