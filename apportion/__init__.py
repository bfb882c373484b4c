"""apportion: exact LP/MILP scheduling policies for GPU clusters, in one import namespace.

    from apportion import solve
    result = solve(snapshot_dict, policy="max_min_fairness")

The floors, bottom up (docs/ARCHITECTURE.md): `apportion.solver` (snapshot, model, backends,
pipeline), `apportion.formulations` (the policy families), `apportion.refdata`,
`apportion.mechanism`, `apportion.client`, `apportion.simulator`, `apportion.cli`,
`apportion.api`, `apportion.adapters`. The library's public names are loaded on first use from
`apportion.solver`, so `import apportion` costs nothing.
"""

from __future__ import annotations

import importlib
from typing import Any

from apportion.solver import __all__ as __all__


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'apportion' has no attribute {name!r}")
    value = getattr(importlib.import_module("apportion.solver"), name)
    globals()[name] = value
    return value
