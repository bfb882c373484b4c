"""snapshot → policy → formulation → backend → result, each step a small function."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from apportion.solver.arrays import ClusterArrays
from apportion.solver.collector import paused_gc
from apportion.solver.context import Captured, ExportContext, SolveContext, describe
from apportion.solver.errors import FieldError, InputError
from apportion.solver.options import PolicyOptions, SolveOptions
from apportion.solver.policy import AnyPolicy, Outcome
from apportion.solver.registry import DEFAULT_POLICY, find_policy, resolve
from apportion.solver.request import checked_request
from apportion.solver.result import Explanation, GpuTypeUsage, SolveResult, SolverReport
from apportion.solver.result.table import JobTable, Layout
from apportion.solver.snapshot import Snapshot, parse_snapshot
from apportion.solver.snapshot.columnar import located_by_column
from apportion.solver.snapshot.columns import JobColumns
from apportion.solver.status import Status

EXPORT_SUFFIXES = (".lp", ".mps")


def solve(
    snapshot: Snapshot | Mapping[str, Any],
    policy: str | None = None,
    options: Mapping[str, Any] | None = None,
    **more_options: Any,
) -> SolveResult:
    """Solve `snapshot` with `policy` (else the snapshot's own, else max-min fairness).

    Options are the common `SolveOptions` (backend, time_limit, ...) and the policy's own, in
    one flat mapping. Raises `InputError` naming the field for anything invalid.
    """
    started = time.perf_counter()
    with paused_gc():
        load_seconds = preload(snapshot, policy)
        loaded = time.perf_counter()
        request = prepare(snapshot, policy, {**(options or {}), **more_options})
        snap, chosen, common, own, _ = request
        problem = ClusterArrays.from_snapshot(snap)
        validated = time.perf_counter()
        ctx = SolveContext.for_request(common)
        outcome = run(chosen, snap, problem, own, ctx)
        result = to_result(chosen, problem, outcome, ctx, jobs_layout(snap, common))
    if request.note:
        result.policy_note = request.note
    result.warnings.extend(overridden(policy, snap.policy))
    result.solver.load_seconds = load_seconds
    result.solver.validate_seconds = validated - loaded
    result.solver.total_seconds = time.perf_counter() - started
    return result


def run(
    policy: AnyPolicy,
    snapshot: Snapshot,
    problem: ClusterArrays,
    options: PolicyOptions,
    ctx: SolveContext | ExportContext,
) -> Outcome:
    """The policy's answer; a field it needs and misses is named where the snapshot gives it
    (by column for jobs given as columns)."""
    try:
        return policy.run(snapshot, problem, options, ctx)
    except InputError as exc:
        if jobs_layout(snapshot, None) == "columns":
            raise located_by_column(exc) from None
        raise


def jobs_layout(snapshot: Snapshot, options: SolveOptions | None) -> Layout:
    """How the result writes its jobs: as the options say, else as the snapshot's came."""
    if options is not None and options.jobs_layout is not None:
        return options.jobs_layout
    jobs = snapshot.jobs
    return jobs.layout if isinstance(jobs, JobColumns) else "rows"


def preload(snapshot: Snapshot | Mapping[str, Any], policy: str | None) -> float:
    """Import the named policy's code before validation is timed; returns the seconds it took
    (0 once loaded). An unknown name is left for `prepare` to report."""
    started = time.perf_counter()
    named = policy
    if named is None:
        if isinstance(snapshot, Snapshot):
            named = snapshot.policy
        elif isinstance(snapshot, Mapping):
            named = snapshot.get("policy")
    find_policy(named if isinstance(named, str) else DEFAULT_POLICY)
    return time.perf_counter() - started


@dataclass(frozen=True)
class ExportedModel:
    """What `export_model` wrote."""

    path: str
    name: str
    variables: int
    constraints: int
    nonzeros: int
    integer_variables: int


def overridden(given: str | None, own: str | None) -> list[str]:
    """The warning that the request's policy is solved instead of the snapshot's own, when
    both are given and name different policies (aliases of one policy do not differ)."""
    if not given or not own:
        return []
    mine, theirs = resolve(given), resolve(own)
    if mine is not None and theirs is not None and mine.policy == theirs.policy:
        return []
    return [f"policy {given!r} given with the request overrides the snapshot's policy {own!r}"]


def export_model(
    snapshot: Snapshot | Mapping[str, Any],
    path: str | Path,
    policy: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> ExportedModel | None:
    """Write the model `solve` would hand to the solver (its first one, for policies that solve
    a sequence) to `path` as .lp or .mps, without solving it. Returns None when the policy
    needs no model for this snapshot (e.g. no job can run anywhere)."""
    target = str(path)
    if not target.lower().endswith(EXPORT_SUFFIXES):
        raise InputError.single(
            ("export",), f"{target!r}: give a file ending in {' or '.join(EXPORT_SUFFIXES)}"
        )
    snap, chosen, common, own, _ = prepare(snapshot, policy, options or {})
    try:
        run(chosen, snap, ClusterArrays.from_snapshot(snap), own, ExportContext(common, target))
    except Captured as captured:
        m = captured.compiled
    else:
        return None
    ints = int(m.integer.sum())
    return ExportedModel(target, m.name, m.num_cols, m.num_rows, int(m.matrix.nnz), ints)


class Prepared(NamedTuple):
    """A validated request; `note` says how a foreign policy name was read (empty for ours)."""

    snapshot: Snapshot
    policy: AnyPolicy
    common: SolveOptions
    own: PolicyOptions
    note: str = ""


def prepare(
    snapshot: Snapshot | Mapping[str, Any], policy: str | None, options: Mapping[str, Any]
) -> Prepared:
    """Validate the snapshot, the policy name and the options; raises one `InputError` with
    every problem found in any of them (as the HTTP API reports them)."""
    errors: list[FieldError] = []
    snap: Snapshot | None = snapshot if isinstance(snapshot, Snapshot) else None
    if snap is None:
        try:
            snap = parse_snapshot(snapshot)
        except InputError as exc:
            errors.extend(exc.errors)
    named = policy or (snap.policy if snap is not None else _named_in(snapshot))
    request = checked_request(named, options)
    if errors or snap is None or isinstance(request, InputError):
        more = request.errors if isinstance(request, InputError) else ()
        raise InputError([*errors, *more])
    chosen, common, own, note = request
    return Prepared(snap, chosen, common, own, note)


def _named_in(snapshot: Snapshot | Mapping[str, Any]) -> str | None:
    """The policy an unparsable snapshot names, if it names one by a string."""
    named = snapshot.get("policy") if isinstance(snapshot, Mapping) else None
    return named if isinstance(named, str) else None


def to_result(
    policy: AnyPolicy,
    problem: ClusterArrays,
    outcome: Outcome,
    ctx: SolveContext,
    layout: Layout = "rows",
) -> SolveResult:
    outcome = _finite(outcome)
    x = outcome.allocation
    eff = outcome.effective_throughput
    if eff is None:
        eff = np.einsum("jk,jk->j", problem.throughput, x)
    used = outcome.gpu_used if outcome.gpu_used is not None else problem.scale_factor @ x
    jobs = job_table(problem, outcome, eff, x, layout)
    gpu_types = [
        GpuTypeUsage(
            name=name, available=int(count), used=gpus, utilization=gpus / count if count else 0.0
        )
        for name, count, gpus in zip(
            problem.gpu_names,
            problem.gpu_count.tolist(),
            np.asarray(used, float).tolist(),
            strict=True,
        )
    ]
    return SolveResult.model_construct(
        schema_version="1",
        policy=policy.name,
        status=outcome.status,
        termination=outcome.verdict[0],
        objective=outcome.objective,
        objective_name=outcome.objective_name,
        jobs=jobs,
        gpu_types=gpu_types,
        summary=dict(outcome.summary),
        warnings=list(outcome.warnings),
        solver=report(ctx, outcome),
        explanation=_explanation(problem, outcome, x, used) if ctx.options.explain else None,
    )


def _explanation(
    problem: ClusterArrays, outcome: Outcome, x: np.ndarray, used: np.ndarray
) -> Explanation:
    # Loaded only when asked for: a plain solve imports nothing of it.
    from apportion.solver.explain import explain

    return explain(problem, outcome.evidence, x, used, outcome.job_metrics)


def _finite(outcome: Outcome) -> Outcome:
    """An answer whose objective is not a finite number is no answer: never `optimal` with an
    objective JSON would write as null."""
    value = outcome.objective
    if value is None or np.isfinite(value) or not outcome.status.has_solution:
        return outcome
    return outcome.but(status=Status.ERROR, objective=None).warned(
        f"the objective came out as {value}; the solution is not trusted"
    )


def job_table(
    problem: ClusterArrays, outcome: Outcome, eff: np.ndarray, x: np.ndarray, layout: Layout
) -> JobTable:
    """The per-job answer as columns; `JobResult` objects are built only if someone reads
    them (`result.jobs` iterated), never for writing the result as columns."""
    return JobTable(
        problem.job_ids,
        problem.gpu_names,
        x,
        eff,
        outcome.normalized_share,
        _reasons(outcome, eff, x),
        outcome.job_metrics,
        dict(outcome.placements),
        layout,
    )


def _reasons(outcome: Outcome, eff: np.ndarray, x: np.ndarray) -> dict[int, str]:
    """The jobs with a reason, if they got nothing: the policy's own, else (with a solution)
    that other jobs' shares bind first. Time given to a job without throughput data is still
    time given."""
    given = outcome.reasons  # with every reason given (the usual case) copied at C speed
    why = dict(given) if all(given.values()) else {j: r for j, r in given.items() if r}
    if outcome.status.has_solution:
        # Row sums as a product with ones: numpy's sum along short rows costs three times as
        # much, and adds each row in the same order.
        given_any = x @ np.ones(x.shape[1])
        idle = ((eff <= 0) & (given_any <= 0)).nonzero()[0].tolist()
        # Most idle jobs have the policy's reason already: only the others get this one.
        left = set(idle).difference(why, outcome.placements)
        if left:
            bind = "allocated no time: other jobs' shares bind first"
            why.update((j, bind) for j in idle if j in left)
    return why


def report(ctx: SolveContext, outcome: Outcome) -> SolverReport:
    """The solver report: the answer's own account (`Outcome.verdict`) and the request's books."""
    _, detail, gap = outcome.verdict
    return SolverReport(
        **describe(ctx.books, ctx.options.backend),
        detail=detail or ("no model needed" if not ctx.books else ""),
        mip_gap=gap,
        merged_groups=outcome.merged_groups,
    )
