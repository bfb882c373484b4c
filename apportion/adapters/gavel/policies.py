"""Policy objects with Gavel's `get_allocation` signatures, solved by apportion in this process
or by a running service.

Gavel's scheduler picks the arguments it passes by the policy's `name` (a prefix match), and
turns on pair throughputs for names with `Packing`; each class here carries the name of the
Gavel policy it replaces, so the scheduler calls it exactly as it calls that one. Class →
the Gavel policy (its `utils.get_policy` name) → apportion's policy:

- `MaxMinFairness()` → `MaxMinFairnessPolicyWithPerf` (`max_min_fairness_perf`) →
  `max_min_fairness`; `agnostic=True` → `MaxMinFairnessPolicy` (`max_min_fairness`) → with
  `heterogeneity_aware=false`
- `MaxMinFairnessSpaceSharing()` → `MaxMinFairnessPolicyWithPacking`
  (`max_min_fairness_packed`) → with `space_sharing=true`
- `WaterFilling()` → `MaxMinFairnessWaterFillingPolicyWithPerf` → `water_filling` (or
  `hierarchical` given `entity_to_job_mapping`); `WaterFillingSpaceSharing()` → `…WithPacking`
- `MinMakespan()` → `MinTotalDurationPolicy` (`min_total_duration`) → `makespan`
- `FinishTimeFairness()` → `FinishTimeFairnessPolicyWithPerf` (`finish_time_fairness_perf`) →
  `finish_time_fairness`
"""

from __future__ import annotations

import logging
from collections.abc import Hashable, Iterable, Mapping
from typing import Any, ClassVar

from apportion.adapters.gavel.convert import (
    Allocation,
    Translation,
    isolated_throughputs,
    translate,
)
from apportion.client import Client, connect
from apportion.solver.errors import InputError
from apportion.solver.result import SolveResult
from apportion.solver.status import Status

log = logging.getLogger("apportion.gavel")

# Keys are the caller's own job id objects: any hashable (Any, so that a `dict[JobIdPair, ...]`
# type-checks: Mapping is invariant in its key).
Throughputs = Mapping[Any, Mapping[str, Any]]
PerJob = Mapping[Any, Any]


class AllocationError(RuntimeError):
    """apportion found no allocation (infeasible, stopped before any, or failed): unlike
    Gavel's policies, which print a warning and return whatever the solver left behind."""


class GavelPolicy:
    """What every adapter shares: where to solve, and the last result for inspection.

    - solver: the cvxpy solver name Gavel's constructors take; accepted so that existing calls
      keep working, and not used (apportion picks an exact backend; force one with
      `options={"backend": ...}`)
    - service_url: solve on a running service (`client.ApportionClient`) instead of in process
      (`client.LocalClient`): the same calls either way
    - client: a `client.Client` to use (and leave open); overrides `service_url`
    - options: apportion options added to every solve (`time_limit`, `backend`, ...)
    """

    NAME: ClassVar[str] = ""
    POLICY: ClassVar[str] = ""
    SPACE_SHARING: ClassVar[bool] = False

    def __init__(
        self,
        solver: str | None = None,
        *,
        service_url: str | None = None,
        client: Client | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        self.solver = solver
        self.options = dict(options or {})
        self._owned = client is None
        self._client = client or connect(service_url)
        #: The apportion result behind the last allocation (objective, status, metrics).
        self.last_result: SolveResult | None = None

    @property
    def name(self) -> str:
        """The Gavel policy name this object stands in for (Gavel's scheduler reads it)."""
        return self.NAME

    def get_allocation(self, *args: Any, **kwargs: Any) -> Allocation:
        """`{job_id: {worker_type: fraction}}`; each policy takes its Gavel counterpart's
        arguments."""
        raise NotImplementedError

    def close(self) -> None:
        """Close the client this policy opened (an HTTP connection pool; nothing in process)."""
        if self._owned:
            self._client.close()

    def _policy_options(self) -> dict[str, Any]:
        return {"space_sharing": True} if self.SPACE_SHARING else {}

    def _translate(
        self,
        throughputs: Throughputs,
        cluster_spec: Mapping[str, Any],
        job_fields: Mapping[str, PerJob],
        extra: Mapping[str, Any] | None = None,
    ) -> tuple[Translation, dict[str, Any]]:
        route = translate(throughputs, cluster_spec, space_sharing=self.SPACE_SHARING)
        snapshot = route.snapshot(throughputs, cluster_spec, job_fields)
        snapshot.update(extra or {})
        return route, snapshot

    def _answer(
        self, route: Translation, snapshot: dict[str, Any], policy: str | None = None
    ) -> Allocation:
        if not route.jobs:
            self.last_result = None
            return {}
        policy = policy or self.POLICY
        options = {**self._policy_options(), **self.options}
        try:
            result = self._client.solve(snapshot, policy, options)
        except InputError as exc:
            raise route.caller_error(exc) from None
        if not result.status.has_solution:
            raise AllocationError(f"{policy}: {result.status}: {'; '.join(result.warnings)}")
        if result.status is not Status.OPTIMAL:
            log.warning("%s answered %s: %s", policy, result.status, "; ".join(result.warnings))
        self.last_result = result
        return route.allocation(result)


class _Fairness(GavelPolicy):
    """Max-min style policies: heterogeneity-aware, or agnostic (`agnostic=True`)."""

    AGNOSTIC_NAME: ClassVar[str] = ""

    def __init__(self, solver: str | None = None, agnostic: bool = False, **where: Any) -> None:
        if agnostic and self.SPACE_SHARING:
            raise ValueError("space sharing needs per-type throughputs: agnostic=True is not here")
        super().__init__(solver, **where)
        self.agnostic = agnostic

    @property
    def name(self) -> str:
        return self.AGNOSTIC_NAME if self.agnostic else self.NAME

    def _policy_options(self) -> dict[str, Any]:
        options = super()._policy_options()
        return {**options, "heterogeneity_aware": False} if self.agnostic else options


class MaxMinFairness(_Fairness):
    """Heterogeneity-aware max-min fairness (Gavel's LAS); `agnostic=True` for the
    heterogeneity-agnostic baseline."""

    NAME = "MaxMinFairness_Perf"
    AGNOSTIC_NAME = "MaxMinFairness"
    POLICY = "max_min_fairness"

    def get_allocation(
        self,
        throughputs: Throughputs,
        scale_factors: PerJob,
        priority_weights: PerJob,
        cluster_spec: Mapping[str, Any],
    ) -> Allocation:
        fields = {"scale_factor": scale_factors, "weight": priority_weights}
        return self._answer(*self._translate(throughputs, cluster_spec, fields))


class MaxMinFairnessSpaceSharing(MaxMinFairness):
    """Max-min fairness with pairs of jobs sharing GPUs (Gavel's `…WithPacking`)."""

    NAME = "MaxMinFairness_Packing"
    SPACE_SHARING = True


class WaterFilling(_Fairness):
    """Leximin max-min fairness by water filling; with Gavel's `entity_to_job_mapping`
    (entity → job ids, the entities' weights in `priority_weights`) it is apportion's
    `hierarchical` policy (weighted fairness across entities, then jobs)."""

    NAME = "MaxMinFairnessWaterFilling_Perf"
    AGNOSTIC_NAME = "MaxMinFairnessWaterFilling"
    POLICY = "water_filling"

    def get_allocation(
        self,
        throughputs: Throughputs,
        scale_factors: PerJob,
        priority_weights: PerJob,
        cluster_spec: Mapping[str, Any],
        entity_to_job_mapping: Mapping[Any, Iterable[Any]] | None = None,
        verbose: bool = False,
    ) -> Allocation:
        """`verbose` is Gavel's printing switch, accepted and unused: the result's
        `solver` report and `last_result` say what happened."""
        fields = {"scale_factor": scale_factors, "weight": priority_weights}
        if not entity_to_job_mapping:
            return self._answer(*self._translate(throughputs, cluster_spec, fields))
        entities, owner = _entities(entity_to_job_mapping, priority_weights)
        owned = {**fields, "entity": owner}
        route, snapshot = self._translate(throughputs, cluster_spec, owned, entities)
        return self._answer(route, snapshot, "hierarchical")


class WaterFillingSpaceSharing(WaterFilling):
    """Water filling with pairs of jobs sharing GPUs."""

    NAME = "MaxMinFairnessWaterFilling_Packing"
    SPACE_SHARING = True


class MinMakespan(GavelPolicy):
    """The allocation that finishes every job soonest (Gavel's `MinTotalDuration`)."""

    NAME = "MinTotalDuration_Perf"
    POLICY = "makespan"

    def get_allocation(
        self,
        throughputs: Throughputs,
        scale_factors: PerJob,
        num_steps_remaining: PerJob,
        cluster_spec: Mapping[str, Any],
    ) -> Allocation:
        fields = {"scale_factor": scale_factors, "steps_remaining": num_steps_remaining}
        return self._answer(*self._translate(throughputs, cluster_spec, fields))


class FinishTimeFairness(GavelPolicy):
    """Minimize the largest finish-time ratio ρ (Themis), keeping Gavel's history.

    Like Gavel's policy object, this one remembers between calls, per job, the time its work so
    far would have taken on its isolated share: each call adds (steps done since the last call)
    ÷ (its isolated throughput at the last call), and passes the sum as the job's
    `isolated_time_done`. The isolated share is apportion's (1/m of every type the job can use,
    m the jobs being allocated). Use one object per scheduler, as Gavel does; a call without
    jobs forgets the last call (Gavel's rule), jobs that leave are forgotten.
    """

    NAME = "FinishTimeFairness_Perf"
    POLICY = "finish_time_fairness"

    def __init__(self, solver: str | None = None, **where: Any) -> None:
        super().__init__(solver, **where)
        #: Per job: seconds its work so far would have taken on its isolated share.
        self.isolated_time_done: dict[Any, float] = {}
        self._steps: dict[Hashable, float] = {}  # steps remaining at the last call
        self._rate: dict[Hashable, float] = {}  # isolated throughput at the last call

    def get_allocation(
        self,
        throughputs: Throughputs,
        scale_factors: PerJob,
        priority_weights: PerJob,
        times_since_start: PerJob,
        num_steps_remaining: PerJob,
        cluster_spec: Mapping[str, Any],
    ) -> Allocation:
        fields = {
            "scale_factor": scale_factors,
            "weight": priority_weights,
            "steps_remaining": num_steps_remaining,
            "time_since_start": times_since_start,
        }
        route, snapshot = self._translate(throughputs, cluster_spec, fields)
        done = self._done(route, snapshot)
        for job, key in zip(snapshot["jobs"], route.jobs, strict=True):
            job["isolated_time_done"] = done[key]
        allocation = self._answer(route, snapshot)
        # Kept only once the call succeeded: a failed call does not count its steps twice.
        rates = isolated_throughputs(snapshot)
        self.isolated_time_done = done
        self._steps = {
            k: j["steps_remaining"] for k, j in zip(route.jobs, snapshot["jobs"], strict=True)
        }
        self._rate = {k: rates[route.ids[k]] for k in route.jobs}
        return allocation

    def _done(self, route: Translation, snapshot: dict[str, Any]) -> dict[Hashable, float]:
        done = {}
        for key, job in zip(route.jobs, snapshot["jobs"], strict=True):
            total = self.isolated_time_done.get(key, 0.0)
            before, rate = self._steps.get(key), self._rate.get(key, 0.0)
            if before is not None and rate > 0:
                total += max(before - job["steps_remaining"], 0.0) / rate
            done[key] = total
        return done


#: Gavel's `utils.get_policy` names this module stands in for.
GAVEL_NAMES: dict[str, tuple[type[GavelPolicy], dict[str, Any]]] = {
    "max_min_fairness": (MaxMinFairness, {"agnostic": True}),
    "max_min_fairness_perf": (MaxMinFairness, {}),
    "max_min_fairness_packed": (MaxMinFairnessSpaceSharing, {}),
    "max_min_fairness_water_filling": (WaterFilling, {"agnostic": True}),
    "max_min_fairness_water_filling_perf": (WaterFilling, {}),
    "max_min_fairness_water_filling_packed": (WaterFillingSpaceSharing, {}),
    "min_total_duration": (MinMakespan, {}),
    "finish_time_fairness_perf": (FinishTimeFairness, {}),
}


def get_policy(policy_name: str, solver: str | None = None, **where: Any) -> GavelPolicy:
    """The adapter for one of Gavel's policy names (as `utils.get_policy` takes them);
    `where` is `service_url`, `client` or `options`."""
    if policy_name not in GAVEL_NAMES:
        known = ", ".join(GAVEL_NAMES)
        raise ValueError(f"no apportion adapter for Gavel policy {policy_name!r}; one of {known}")
    kind, fixed = GAVEL_NAMES[policy_name]
    return kind(solver, **fixed, **where)


def _entities(
    mapping: Mapping[Any, Iterable[Any]], weights: PerJob
) -> tuple[dict[str, Any], dict[Hashable, str]]:
    """The snapshot's `entities` (weights from `priority_weights[entity]`, 1 if absent) and
    each job's entity id."""
    ids = {entity: f"entity-{i}" for i, entity in enumerate(mapping)}
    owner = {job: ids[entity] for entity, jobs in mapping.items() for job in jobs}
    listed = [{"id": ids[e], "weight": float(weights.get(e, 1.0))} for e in mapping]
    return {"entities": listed}, owner
