"""What-if: two snapshots (or one and a patch) solved under one policy, and the per-job
differences in allocation, share and effective throughput, largest first.

Advisory only: each side is solved on its own, so where a policy has several equally good
answers a job may move between them for no reason in the data; and the normalizers of shares
(prop_j) change with the cluster, so shares on either side are measured against that side's
equal shares.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, ValidationError

from apportion.solver.errors import FieldError, InputError
from apportion.solver.pipeline import solve
from apportion.solver.result import Comparison, GpuChange, JobChange, JobResult, SolveResult
from apportion.solver.snapshot.column_values import job_documents
from apportion.solver.status import Status


class Patch(BaseModel):
    """Changes to the `before` snapshot that make the `after` one."""

    model_config = ConfigDict(extra="forbid", strict=True)

    gpus: dict[str, StrictInt] = Field(
        default_factory=dict,
        description="GPU type → GPUs to add (negative: remove); a new type needs a positive count.",
    )
    add_jobs: list[dict[str, Any]] = Field(
        default_factory=list, description="Jobs to add, as in the snapshot."
    )
    remove_jobs: list[str] = Field(default_factory=list, description="Ids of jobs to remove.")
    weights: dict[str, StrictFloat | StrictInt] = Field(
        default_factory=dict, description="Job id → its new weight."
    )


def compare(
    before: Mapping[str, Any],
    after: Mapping[str, Any] | None = None,
    patch: Mapping[str, Any] | None = None,
    policy: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> Comparison:
    """Solve both sides under one policy (the request's, else `before`'s) with the same
    options, within one time limit (the second side gets what the first left); raises
    `InputError` naming the field for bad input."""
    if (after is None) == (patch is None):
        raise InputError.single(("after",), "give exactly one of `after` and `patch`")
    if after is None:
        after = apply_patch(before, _patch(patch))
    named = policy or (before.get("policy") if isinstance(before, Mapping) else None)
    started = time.perf_counter()
    first = _side(before, "before", named, options)
    second = _side(after, "after", first.policy, _rest_of(options, started))
    return difference(first, second)


#: The time limit the second side gets when the first used all of it: enough for a solver to
#: return what its start found (the status then says the limit stopped it).
MIN_SECONDS = 0.01


def _rest_of(options: Mapping[str, Any] | None, started: float) -> Mapping[str, Any] | None:
    """The options with what remains of their time limit: `time_limit` bounds the comparison
    as a whole, like one solve, not each side."""
    limit = (options or {}).get("time_limit")
    if options is None or isinstance(limit, bool) or not isinstance(limit, int | float):
        return options  # no limit, or one the first side's validation has refused
    left = max(float(limit) - (time.perf_counter() - started), MIN_SECONDS)
    return {**options, "time_limit": left}


def _side(
    snapshot: Mapping[str, Any], name: str, policy: str | None, options: Mapping[str, Any] | None
) -> SolveResult:
    try:
        return solve(snapshot, policy=policy, options=options)
    except InputError as exc:
        raise InputError([_under(name, e) for e in exc.errors]) from None


def _under(side: str, error: FieldError) -> FieldError:
    """An error of one side's snapshot, located under that side (`before.jobs[3].weight`)."""
    loc = error.loc[1:] if error.loc[:1] == ("snapshot",) else error.loc
    if loc[:1] in (("options",), ("policy",)):
        return error
    return FieldError((side, *loc), error.msg, error.type)


def _patch(raw: Any) -> Patch:
    try:
        return Patch.model_validate(raw)
    except ValidationError as exc:
        raise InputError.from_validation(exc, ("patch",)) from None


def apply_patch(before: Mapping[str, Any], patch: Patch) -> dict[str, Any]:
    """`before` with the patch applied; an unknown type or job, or a count below 0, is an
    error naming the patch's field."""
    if not isinstance(before, Mapping):
        raise InputError.single(("before",), "a snapshot is a JSON object")
    after: dict[str, Any] = copy.deepcopy(dict(before))
    types = {g.get("name"): g for g in after.get("gpu_types", []) if isinstance(g, dict)}
    errors = []
    for name, added in patch.gpus.items():
        current = types.get(name)
        count = (current.get("count", 0) if current else 0) + added
        if not isinstance(count, int) or count < 0 or (current is None and count == 0):
            errors.append(FieldError(("patch", "gpus", name), f"leaves {count} GPUs of {name!r}"))
        elif current is None:
            after.setdefault("gpu_types", []).append({"name": name, "count": count})
        else:
            current["count"] = count
    given = after.get("jobs", [])
    if isinstance(given, Mapping):  # jobs as columns: patched as the documents they stand for
        given = job_documents(given) or []
    jobs = [j for j in given if isinstance(j, dict)]
    known = {j.get("id") for j in jobs}
    for field, ids in (("remove_jobs", patch.remove_jobs), ("weights", list(patch.weights))):
        errors += [FieldError(("patch", field, i), "no such job") for i in ids if i not in known]
    if errors:
        raise InputError(errors)
    removed = set(patch.remove_jobs)
    jobs = [j for j in jobs if j.get("id") not in removed]
    for job in jobs:
        if job.get("id") in patch.weights:
            job["weight"] = patch.weights[job["id"]]
    after["jobs"] = jobs + copy.deepcopy(patch.add_jobs)
    return after


def difference(before: SolveResult, after: SolveResult) -> Comparison:
    """Per-job changes (jobs only on one side count as added or removed), largest first. When
    a side has no allocation (stopped at the time limit before finding one, infeasible), there
    is nothing to compare: no per-job changes, and a warning saying which side and why."""
    comparable = before.status.has_solution and after.status.has_solution
    changes = _changes(before, after) if comparable else []
    moved = sorted((c for c in changes if c.change != "same"), key=lambda c: (-c.size, c.id))
    delta = None
    if comparable and before.objective is not None and after.objective is not None:
        delta = after.objective - before.objective
    return Comparison(
        policy=before.policy,
        objective_name=before.objective_name,
        status_before=before.status,
        status_after=after.status,
        objective_before=before.objective,
        objective_after=after.objective,
        objective_delta=delta,
        gpu_types=_gpus(before, after) if comparable else [],
        jobs=moved,
        unchanged=len(changes) - len(moved),
        warnings=_warnings(before, after),
    )


def _changes(before: SolveResult, after: SolveResult) -> list[JobChange]:
    old = {j.id: j for j in before.jobs}
    new = {j.id: j for j in after.jobs}
    return [_change(i, old.get(i), new.get(i)) for i in dict.fromkeys([*old, *new])]


def _warnings(before: SolveResult, after: SolveResult) -> list[str]:
    """What each side that is not an optimum means for the comparison."""
    out = []
    for name, side in (("before", before), ("after", after)):
        why = f"the `{name}` side ended {side.status.value} (solver: {side.termination.value})"
        if not side.status.has_solution:
            out.append(f"{why}: it has no allocation, so no per-job differences are given")
        elif side.status is not Status.OPTIMAL:
            out.append(
                f"{why}: its allocation is not proven optimal, so differences may come "
                "from where the solver stopped rather than from the data"
            )
    return out


#: Changes below this are round-off, not a difference.
SAME = 1e-9


def _change(job_id: str, old: JobResult | None, new: JobResult | None) -> JobChange:
    a = old.allocation if old else {}
    b = new.allocation if new else {}
    delta = {k: b.get(k, 0.0) - a.get(k, 0.0) for k in dict.fromkeys([*a, *b])}
    delta = {k: v for k, v in delta.items() if abs(v) > SAME}
    s0 = old.normalized_share if old else None
    s1 = new.normalized_share if new else None
    t0 = old.effective_throughput if old else 0.0
    t1 = new.effective_throughput if new else 0.0
    share_delta = s1 - s0 if s0 is not None and s1 is not None else None
    if share_delta is not None:
        size = abs(share_delta)
    else:
        size = abs(t1 - t0) / max(abs(t0), abs(t1), 1e-300)
    if not delta and size <= SAME:
        size = 0.0
    return JobChange(
        id=job_id,
        change=_kind(old, new, delta, t1 - t0, size),
        allocation_before=a,
        allocation_after=b,
        allocation_delta=delta,
        share_before=s0,
        share_after=s1,
        share_delta=share_delta,
        throughput_before=t0,
        throughput_after=t1,
        throughput_delta=t1 - t0,
        size=size,
    )


def _kind(
    old: JobResult | None, new: JobResult | None, delta: dict[str, float], gain: float, size: float
) -> str:
    """What happened to the job: added, removed, gained or lost effective throughput, moved
    (other GPUs, the same throughput), rescaled (the same allocation; only its share changed,
    measured against the other side's cluster), or the same."""
    if old is None or new is None:
        return "added" if new else "removed"
    scale = max(abs(old.effective_throughput), abs(new.effective_throughput), 1.0)
    if abs(gain) > SAME * scale:
        return "gained" if gain > 0 else "lost"
    if delta:
        return "moved"
    return "rescaled" if size > 0 else "same"


def _gpus(before: SolveResult, after: SolveResult) -> list[GpuChange]:
    old = {g.name: g for g in before.gpu_types}
    new = {g.name: g for g in after.gpu_types}
    return [
        GpuChange(
            name=name,
            available_before=old[name].available if name in old else 0,
            available_after=new[name].available if name in new else 0,
            used_before=old[name].used if name in old else 0.0,
            used_after=new[name].used if name in new else 0.0,
        )
        for name in dict.fromkeys([*old, *new])
    ]
