"""Policy names a simulation accepts: every apportion policy (and alias), the baselines of
`simulator.baselines`, YARN-CS (`simulator.yarn`), Chronus's own admission
(`chronus_one_by_one`: deadline admission one job at a time, by value, `admission=one_by_one`,
with Chronus's 10 % margin on every estimate),
and heterogeneity-agnostic variants:
`max_min_agnostic` and `makespan_agnostic` (the policy with `heterogeneity_aware=false`; the
makespan then sees each
job at its mean speed over the cluster's GPUs of the types it can use) and
`finish_time_fairness_agnostic` (the policy shown every job at that one speed, see
`simulator.clients.TypeBlindPolicy`). A foreign name (Gavel's `max_min_fairness_packed`) runs as
ours with the options it implies, so the simulator builds what they need (pairs for space
sharing)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from apportion.simulator.baselines import ALIASES, KEYS, Baseline
from apportion.simulator.clients import ApportionPolicy, Decider, TypeBlindPolicy
from apportion.simulator.config import SimConfig

#: Named variants of apportion policies with fixed options.
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "max_min_agnostic": ("max_min_fairness", {"heterogeneity_aware": False}),
    "makespan_agnostic": ("makespan", {"heterogeneity_aware": False}),
    "chronus_one_by_one": (
        "deadline_admission",
        {"admission": "one_by_one", "objective": "value", "safety_margin": 0.1},
    ),
}
#: Heterogeneity-agnostic versions of policies that have no `heterogeneity_aware` option (Gavel's
#: agnostic baselines): the policy sees each job at one speed on every type it can use.
TYPE_BLIND: dict[str, str] = {
    "finish_time_fairness_agnostic": "finish_time_fairness",
}


#: Baselines that place gangs on nodes themselves.
NODE_BASELINES = ("yarn_cs",)


def check_policy(name: str) -> None:
    """Raises ValueError naming the choices when nothing knows `name`."""
    if name in KEYS or name in ALIASES or name in VARIANTS or name in TYPE_BLIND:
        return
    if name in NODE_BASELINES:
        return
    from apportion.solver.registry import find_policy

    if find_policy(name) is None:
        raise ValueError(f"unknown policy {name!r}; choose one of {', '.join(policy_names())}")


def make_decider(name: str, options: Mapping[str, Any], http: str | None = None) -> Decider:
    """The decider for `name`; raises ValueError for a name nothing knows."""
    check_policy(name)
    if name in KEYS or name in ALIASES:
        return Baseline(name, options)
    if name in NODE_BASELINES:
        from apportion.simulator.yarn import YarnCapacity

        return YarnCapacity(name, options)
    if name in VARIANTS:
        policy, fixed = VARIANTS[name]
        return ApportionPolicy(policy, {**fixed, **options}, http)
    if name in TYPE_BLIND:
        return TypeBlindPolicy(TYPE_BLIND[name], options, http)
    return ApportionPolicy(name, options, http)


def canonical(config: SimConfig) -> SimConfig:
    """`config` with a foreign policy name (Gavel's) replaced by ours and the options it
    implies, so every part of the simulation reads one name (pairs for space sharing, the
    history finish-time fairness needs); raises ValueError when an option contradicts them."""
    policy, implied = implied_options(config.policy)
    if not implied and policy == config.policy:
        return config
    clashes = [k for k, v in implied.items() if k in config.options and config.options[k] != v]
    if clashes:
        given = ", ".join(f"{k}={config.options[k]!r}" for k in clashes)
        raise ValueError(f"policy {config.policy!r} implies {implied}; {given} contradicts it")
    return replace(config, policy=policy, options={**implied, **config.options})


def implied_options(name: str) -> tuple[str, dict[str, Any]]:
    """Our policy for `name` and the options the name implies (none for our own names)."""
    from apportion.solver.registry import resolve

    resolved = resolve(name)
    if resolved is None or not resolved.note:
        return name, {}
    return resolved.policy, dict(resolved.options)


def policy_names() -> tuple[str, ...]:
    from apportion.solver.registry import NAMES

    return (*NAMES, *KEYS, *NODE_BASELINES, *VARIANTS, *TYPE_BLIND)
