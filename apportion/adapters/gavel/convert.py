"""Gavel's arguments → an apportion snapshot, and apportion's answer → Gavel's allocation, keyed
by the caller's own job id objects both ways.

Gavel passes nested dicts keyed by job ids (hashable objects; Gavel's own are `JobIdPair`s with
integer ids) and worker types. Under space sharing some keys of `throughputs` are pairs: an
object whose `is_pair()` is true (its `singletons()` are the two members), or a plain 2-tuple
of two keys that have throughputs of their own; a pair's value per worker type is
`[throughput of the first member, of the second]`. Pairs become the snapshot's `job_pairs` and
come back from `summary.pair_allocations` under the caller's pair key. Errors name the Gavel
argument and the caller's key: `("scale_factors", "7")`, `("throughputs", "(3, 4)", "v100")`.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from numbers import Real
from typing import Any

import numpy as np

from apportion.solver.errors import FieldError, InputError
from apportion.solver.result import SolveResult

Allocation = dict[Any, dict[str, float]]
#: The snapshot's job fields and the Gavel argument each comes from.
ARGUMENTS = {
    "throughput": "throughputs",
    "scale_factor": "scale_factors",
    "weight": "priority_weights",
    "steps_remaining": "num_steps_remaining",
    "time_since_start": "times_since_start",
    "entity": "entity_to_job_mapping",
}
MAX_ID_LENGTH = 200


@dataclass(frozen=True)
class Pair:
    key: Hashable  # the caller's key for the pair
    a: Hashable  # its members' keys, in the order of the throughput lists
    b: Hashable


@dataclass
class Translation:
    """One `get_allocation` call in apportion's terms, and the way back."""

    worker_types: list[str]
    keys: list[Hashable]  # every key of `throughputs`, in the caller's order
    jobs: list[Hashable]  # the single jobs, in snapshot order
    pairs: list[Pair]  # in snapshot `job_pairs` order
    ids: dict[Hashable, str] = field(default_factory=dict)  # single job key → snapshot id

    def snapshot(
        self,
        throughputs: Mapping[Any, Mapping[str, Any]],
        cluster_spec: Mapping[str, Any],
        job_fields: Mapping[str, Mapping[Any, Any]],
    ) -> dict[str, Any]:
        """The snapshot: GPU types from `cluster_spec`, one job per single key with
        `job_fields` (snapshot field → the Gavel argument giving it per job), the pairs."""
        errors: list[FieldError] = []
        gpu_types = [
            {"name": k, "count": _count(n, ("cluster_spec", k), errors)}
            for k, n in cluster_spec.items()
        ]
        jobs = []
        for key in self.jobs:
            job: dict[str, Any] = {"id": self.ids[key]}
            job["throughput"] = _row(throughputs[key], ("throughputs", str(key)), errors)
            for name, values in job_fields.items():
                job[name] = _per_job(values, key, name, errors)
            jobs.append(job)
        pairs = [self._pair(p, throughputs[p.key], errors) for p in self.pairs]
        if errors:
            raise InputError(errors)
        document: dict[str, Any] = {"gpu_types": gpu_types, "jobs": jobs}
        if pairs:
            document["job_pairs"] = pairs
        return document

    def allocation(self, result: SolveResult) -> Allocation:
        """`{key: {worker_type: fraction}}` for every key the caller passed (pairs included),
        every worker type present, zeros where nothing was given."""
        out: Allocation = {key: dict.fromkeys(self.worker_types, 0.0) for key in self.keys}
        key_of = {job_id: key for key, job_id in self.ids.items()}
        for job in result.jobs:
            row = out[key_of[job.id]]
            for k, x in job.allocation.items():
                row[k] = float(x)
        pair_of = {frozenset((self.ids[p.a], self.ids[p.b])): p.key for p in self.pairs}
        for entry in result.summary.get("pair_allocations") or []:
            row = out[pair_of[frozenset((entry["a"], entry["b"]))]]
            for k, y in entry["allocation"].items():
                row[k] = float(y)
        return out

    def caller_error(self, exc: InputError) -> InputError:
        """apportion's error, located in the caller's arguments and keys."""
        return InputError([self._relocated(e) for e in exc.errors])

    def _relocated(self, error: FieldError) -> FieldError:
        loc = error.loc
        if len(loc) < 3 or loc[0] != "snapshot" or not isinstance(loc[2], int):
            return error
        part, index, rest = loc[1], loc[2], loc[3:]
        where: tuple[str | int, ...] | None = None
        if part == "jobs" and index < len(self.jobs) and rest and rest[0] in ARGUMENTS:
            where = (ARGUMENTS[str(rest[0])], str(self.jobs[index]), *rest[1:])
        elif part == "gpu_types" and index < len(self.worker_types):
            where = ("cluster_spec", self.worker_types[index])
        elif part == "job_pairs" and index < len(self.pairs):
            where = ("throughputs", str(self.pairs[index].key), *rest[1:])
        return error if where is None else FieldError(where, error.msg, error.type)

    def _pair(self, pair: Pair, row: Mapping[str, Any], errors: list[FieldError]) -> dict[str, Any]:
        loc = ("throughputs", str(pair.key))
        both: dict[str, list[float]] = {}
        for k, value in row.items():
            if not isinstance(value, Sequence) or isinstance(value, str) or len(value) != 2:
                errors.append(FieldError((*loc, k), "expected [throughput of a, of b]"))
                continue
            t = [_number(v, (*loc, k, i), errors) for i, v in enumerate(value)]
            if t[0] > 0 or t[1] > 0:
                both[k] = t
        return {"a": self.ids[pair.a], "b": self.ids[pair.b], "throughput": both}


def translate(
    throughputs: Mapping[Any, Mapping[str, Any]],
    cluster_spec: Mapping[str, Any],
    *,
    space_sharing: bool,
) -> Translation:
    """Sort the keys into single jobs and pairs, and give every single job a snapshot id (its
    `str()` when those are distinct and valid ids, else its position)."""
    keys = list(throughputs)
    pairs = [p for p in map(_pair_of(throughputs), keys) if p is not None]
    paired = {p.key for p in pairs}
    if pairs and not space_sharing:
        loc = ("throughputs", str(pairs[0].key))
        msg = "a pair of jobs, but this policy does not share GPUs (use a SpaceSharing policy)"
        raise InputError.single(loc, msg)
    jobs = [key for key in keys if key not in paired]
    names = [str(key) for key in jobs]
    readable = len(set(names)) == len(names) and all(_valid_id(n) for n in names)
    ids = dict(
        zip(jobs, names if readable else [f"job-{i}" for i in range(len(jobs))], strict=True)
    )
    return Translation([str(k) for k in cluster_spec], keys, jobs, pairs, ids)


def _pair_of(throughputs: Mapping[Any, Any]) -> Any:
    def pair(key: Hashable) -> Pair | None:
        is_pair = getattr(key, "is_pair", None)
        if callable(is_pair):
            if not is_pair():
                return None
            members = tuple(key.singletons())  # type: ignore[attr-defined]
        elif isinstance(key, tuple) and len(key) == 2 and all(m in throughputs for m in key):
            members = key
        else:
            return None
        missing = [m for m in members if m not in throughputs]
        if len(members) != 2 or missing:
            msg = f"pair members {members!r} must each have throughputs of their own"
            raise InputError.single(("throughputs", str(key)), msg)
        return Pair(key, members[0], members[1])

    return pair


def _valid_id(name: str) -> bool:
    return 0 < len(name) <= MAX_ID_LENGTH and name == name.strip()


def _row(row: Any, loc: tuple[str, ...], errors: list[FieldError]) -> dict[str, float]:
    if not isinstance(row, Mapping):
        errors.append(FieldError(loc, "expected {worker_type: throughput}"))
        return {}
    # Zero means "cannot run there", which the snapshot says by leaving the type out.
    values = {str(k): _number(v, (*loc, str(k)), errors) for k, v in row.items()}
    return {k: v for k, v in values.items() if v != 0}


def _per_job(values: Mapping[Any, Any], key: Hashable, name: str, errors: list[FieldError]) -> Any:
    loc = (ARGUMENTS.get(name, name), str(key))
    if key not in values:
        errors.append(FieldError(loc, "missing for this job", "missing"))
        return None
    if name == "entity":
        return values[key]
    if name == "scale_factor":
        return _count(values[key], loc, errors)
    return _number(values[key], loc, errors)


def _number(value: Any, loc: tuple[str | int, ...], errors: list[FieldError]) -> float:
    # A string or a boolean is never taken for a number (as in the snapshot itself).
    if isinstance(value, bool) or not isinstance(value, Real):
        errors.append(FieldError(loc, f"expected a number, got {type(value).__name__}"))
        return 0.0
    return float(value)


def _count(value: Any, loc: tuple[str | int, ...], errors: list[FieldError]) -> int:
    number = _number(value, loc, errors)
    if not math.isfinite(number) or number != int(number):
        errors.append(FieldError(loc, f"expected a whole number, got {value!r}"))
        return 0
    return int(number)


def isolated_throughputs(snapshot: Mapping[str, Any]) -> dict[str, float]:
    """iso_j, each job's throughput on its isolated share as apportion's finish-time fairness
    defines it (FORMULATIONS §3: 1/m of every type the job can use, m the jobs it allocates);
    0 for a job it does not allocate (no steps left, or it can run nowhere)."""
    from apportion.formulations.objectives.finish_time_fairness import isolated_allocation

    names = [g["name"] for g in snapshot["gpu_types"]]
    counts = np.array([float(g["count"]) for g in snapshot["gpu_types"]])
    jobs = snapshot["jobs"]
    throughput = np.array(
        [[float(job["throughput"].get(k, 0.0)) for k in names] for job in jobs]
    ).reshape(len(jobs), len(names))
    scale = np.array([float(job["scale_factor"]) for job in jobs])
    steps = np.array([float(job["steps_remaining"]) for job in jobs])
    usable = np.where((throughput > 0) & (scale[:, None] <= counts[None, :]), throughput, 0.0)
    active = (usable > 0).any(axis=1) & (steps > 0)
    iso = np.zeros(len(jobs))
    if active.any():
        share = isolated_allocation(usable[active], scale[active], counts)
        iso[active] = (usable[active] * share).sum(axis=1)
    return {job["id"]: float(x) for job, x in zip(jobs, iso.tolist(), strict=True)}
