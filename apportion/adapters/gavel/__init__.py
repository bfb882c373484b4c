"""A drop-in for Gavel-style schedulers (Gavel, and POP, Shockwave, … built on its code).

Their scheduler calls `policy.get_allocation(throughputs, scale_factors, priority_weights,
cluster_spec, ...)` every round and expects `{job_id: {worker_type: fraction}}` back, keyed by
its own job id objects. The classes here have those signatures and Gavel's policy names, and
solve with apportion, in process or on a running service (`service_url=`):

    from apportion.adapters.gavel import MaxMinFairness

    policy = MaxMinFairness()                  # or MaxMinFairness(service_url="http://...")
    allocation = policy.get_allocation(throughputs, scale_factors, priority_weights,
                                       cluster_spec)
    policy.last_result.objective               # apportion's own account of the answer

Nothing here imports the scheduler's code: job ids are any hashable objects (pairs recognised
by `is_pair()`/`singletons()`, or as 2-tuples of job ids), worker types are strings.
"""

from __future__ import annotations

from apportion.adapters.gavel.policies import (
    GAVEL_NAMES,
    AllocationError,
    FinishTimeFairness,
    GavelPolicy,
    MaxMinFairness,
    MaxMinFairnessSpaceSharing,
    MinMakespan,
    WaterFilling,
    WaterFillingSpaceSharing,
    get_policy,
)

__all__ = [
    "GAVEL_NAMES",
    "AllocationError",
    "FinishTimeFairness",
    "GavelPolicy",
    "MaxMinFairness",
    "MaxMinFairnessSpaceSharing",
    "MinMakespan",
    "WaterFilling",
    "WaterFillingSpaceSharing",
    "get_policy",
]
