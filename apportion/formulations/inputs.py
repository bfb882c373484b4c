"""Fields a policy needs that the schema leaves optional: missing ones are input errors.

Each check names every offending field (as the snapshot's location) and the policy that needs it,
so a caller sees at once what to add; nothing is silently defaulted.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from apportion.solver.arrays import ClusterArrays
from apportion.solver.arraytypes import IntArray
from apportion.solver.errors import FieldError, InputError


def require_job_field(
    problem: ClusterArrays, values: NDArray[np.float64], jobs: IntArray, field: str, policy: str
) -> None:
    """Every job in `jobs` must carry `field` (NaN in `values` = missing)."""
    missing = jobs[np.isnan(values[jobs])]
    if missing.size:
        raise InputError(
            [
                FieldError(
                    ("snapshot", "jobs", int(j), field),
                    f"required by the {policy} policy (job {problem.job_ids[j]!r})",
                    "missing",
                )
                for j in missing
            ]
        )


def require_now(problem: ClusterArrays, policy: str) -> float:
    """The snapshot's clock, needed to turn absolute deadlines into time left."""
    if problem.now is None:
        raise InputError.single(
            ("snapshot", "now"),
            f"required by the {policy} policy when jobs have deadlines (same clock as deadlines)",
            "missing",
        )
    return float(problem.now)


def require_prices(
    problem: ClusterArrays, used: NDArray[np.bool_], policy: str, positive: bool = False
) -> None:
    """Every GPU type in `used` must have a price (a positive one if `positive`)."""
    price = problem.price_per_hour
    errors = [
        FieldError(
            ("snapshot", "gpu_types", int(k), "price_per_hour"),
            f"required by the {policy} policy: jobs can run on {problem.gpu_names[k]!r}",
            "missing",
        )
        for k in np.flatnonzero(used & np.isnan(price))
    ]
    if positive:
        errors += [
            FieldError(
                ("snapshot", "gpu_types", int(k), "price_per_hour"),
                f"must be positive for the {policy} policy (it divides by the price)",
                "value_error",
            )
            for k in np.flatnonzero(used & (price <= 0))
        ]
    if errors:
        raise InputError(errors)
