"""`solve simulate --remaining-noise SIGMA`: remaining times told with an error (leases mode).

The flags map onto `SimConfig`'s remaining-time belief (`simulator.remaining_belief`): the
noise σ (drawn once per `--seed` and job), the margin (`derived`: e^(σ q) − 1 sent as every
job's `remaining_time_uncertainty`; `none`: the belief taken as exact), its level q and the
estimator. The margin's flags without a noise would change nothing, and a policy that is not
enacted in leases mode, or a baseline (it ranks on the simulator's own state), would never read
the belief: each is refused naming its flag.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

#: The margin flags that mean something only with a noise (flag, attribute).
WITH_NOISE = (
    ("--remaining-margin", "remaining_margin"),
    ("--remaining-level", "remaining_level"),
    ("--remaining-estimator", "remaining_estimator"),
)


def remaining(args: argparse.Namespace) -> dict[str, Any]:
    """The `SimConfig` fields the flags ask for ({} without a noise); ValueError naming the
    flag otherwise."""
    sigma = _sigma(args.remaining_noise)
    if sigma == 0:
        given = [flag for flag, name in WITH_NOISE if getattr(args, name) is not None]
        if given:
            raise ValueError(f"{given[0]}: needs --remaining-noise SIGMA > 0")
        return {}
    from apportion.simulator.config import SimConfig

    names = [n.strip() for n in str(args.policy).split(",") if n.strip()] or [SimConfig.policy]
    _check_policies(names, args.mode)
    return {
        # The sweep sets each run's policy; the first one makes the shared settings checkable.
        "policy": names[0],
        "remaining_time_noise": sigma,
        "remaining_time_level": _level(args.remaining_level, args.remaining_margin),
        "remaining_time_estimator": args.remaining_estimator or "none",
    }


def _sigma(text: str | None) -> float:
    if text is None:
        return 0.0
    try:
        sigma = float(text)
    except ValueError:
        raise ValueError(f"--remaining-noise: {text!r} is not a number") from None
    if not 0 <= sigma < math.inf:
        raise ValueError(f"--remaining-noise {text}: must be a number ≥ 0")
    return sigma


def _level(text: str | None, margin: str | None) -> float | None:
    if margin == "none":
        if text is not None:
            raise ValueError("--remaining-level: --remaining-margin none sends no margin")
        return None
    if text is None:
        from apportion.simulator.config import REMAINING_TIME_LEVEL

        return REMAINING_TIME_LEVEL
    try:
        level = float(text)
    except ValueError:
        raise ValueError(f"--remaining-level: {text!r} is not a number") from None
    if not 0.5 <= level < 1:
        raise ValueError(f"--remaining-level {text}: must be at least 0.5 and below 1")
    return level


def _check_policies(names: list[str], mode: str) -> None:
    from apportion.simulator.baselines import ALIASES, KEYS
    from apportion.simulator.config import Mode, SimConfig
    from apportion.simulator.policies import NODE_BASELINES, check_policy

    for name in names:
        try:
            check_policy(name)
        except ValueError:
            continue  # said elsewhere, with the names it could have been
        if name in KEYS or name in ALIASES or name in NODE_BASELINES:
            raise ValueError(
                f"--remaining-noise: baseline {name!r} ranks on the simulator's own state; "
                "a belief reaches only policies sent a snapshot"
            )
        enactment = SimConfig(policy=name, mode=Mode(mode)).enactment
        if enactment != Mode.LEASES:
            raise ValueError(
                f"--remaining-noise: remaining times are believed apart from the truth in "
                f"leases mode only (policy {name!r} runs in {enactment.value})"
            )
