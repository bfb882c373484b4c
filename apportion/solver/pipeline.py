"""snapshot → policy → formulation → backend → result, each step a small function."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import numpy as np
from pydantic import ValidationError

from apportion.solver.arrays import ClusterArrays
from apportion.solver.backends import AUTO, backend_names, capable_of, get_backend
from apportion.solver.collector import paused_gc
from apportion.solver.context import Captured, ExportContext, SolveContext, describe
from apportion.solver.errors import FieldError, InputError, did_you_mean
from apportion.solver.options import PolicyOptions, SolveOptions
from apportion.solver.policy import AnyPolicy, Outcome
from apportion.solver.registry import DEFAULT_POLICY, find_policy, resolve, unknown_policy
from apportion.solver.result import Explanation, GpuTypeUsage, SolveResult, SolverReport
from apportion.solver.result.table import JobTable, Layout
from apportion.solver.snapshot import Snapshot, parse_snapshot
from apportion.solver.snapshot.columnar import located_by_column
from apportion.solver.snapshot.columns import JobColumns
from apportion.solver.status import Status

M = TypeVar("M", SolveOptions, PolicyOptions)
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


def checked_request(
    policy: str | None, options: Mapping[str, Any]
) -> tuple[AnyPolicy, SolveOptions, PolicyOptions, str] | InputError:
    """The policy `policy` names with its validated options and note, or every problem with
    the name and the options (returned, so a caller can report them with others)."""
    try:
        chosen, implied, note = resolve_policy(policy, options)
        common, own = split_options(chosen, {**implied, **options})
        return chosen, check_backend(chosen, with_defaults(chosen, common)), own, note
    except InputError as exc:
        return exc


def _named_in(snapshot: Snapshot | Mapping[str, Any]) -> str | None:
    """The policy an unparsable snapshot names, if it names one by a string."""
    named = snapshot.get("policy") if isinstance(snapshot, Mapping) else None
    return named if isinstance(named, str) else None


def with_defaults(policy: AnyPolicy, options: SolveOptions) -> SolveOptions:
    """The request's options with the policy's defaults where the request left them unset."""
    defaults = policy.defaults
    update = {
        key: value
        for key, value in (("time_limit", defaults.time_limit), ("mip_gap", defaults.mip_gap))
        if value is not None and getattr(options, key) is None
    }
    return options.model_copy(update=update) if update else options


def check_backend(policy: AnyPolicy, options: SolveOptions) -> SolveOptions:
    """Backend and sub-solver must exist and be able to solve the policy's problem class; an
    error names the alternatives. Returns the options with the solver's canonical spelling."""
    if options.backend == AUTO:
        if options.solver is not None:
            raise InputError.single(
                ("options", "solver"),
                f"solver {options.solver!r} needs a backend: set options.backend to one of "
                + "; ".join(
                    f"{n} ({', '.join(get_backend(n).available_solvers())})"
                    for n in backend_names()
                    if n != AUTO
                ),
            )
        return options
    backend = get_backend(options.backend)
    try:
        solver = backend.resolve_solver(options.solver)
    except ValueError as exc:
        raise InputError.single(("options", "solver"), str(exc)) from None
    for needs in sorted(policy.needs - backend.features_for(solver)):
        who = options.backend + (f" with solver {solver}" if solver else "")
        raise InputError.single(
            ("options", "solver" if solver else "backend"),
            f"backend {who} cannot solve {needs.value.upper()} models ({policy.name}); use "
            + ", ".join([AUTO, *capable_of(needs)]),
        )
    return options.model_copy(update={"solver": solver})


def resolve_policy(
    name: str | None, options: Mapping[str, Any]
) -> tuple[AnyPolicy, dict[str, Any], str]:
    """The policy `name` means (default: max-min fairness), the options its name implies and
    the note that says so. An option given against what the name implies is an error."""
    wanted = name or DEFAULT_POLICY
    resolved = resolve(wanted)
    found = None if resolved is None else find_policy(resolved.policy)
    if resolved is None or found is None:
        raise InputError.single(("policy",), unknown_policy(wanted))
    clashes = [
        FieldError(
            ("options", key),
            f"policy {wanted!r} implies {key}={value!r}; give {resolved.policy} to choose it",
        )
        for key, value in resolved.options.items()
        if key in options and options[key] != value
    ]
    if clashes:
        raise InputError(clashes)
    return found, dict(resolved.options), resolved.note


def split_options(policy: AnyPolicy, raw: Mapping[str, Any]) -> tuple[SolveOptions, PolicyOptions]:
    """Common options go to `SolveOptions`, the rest to the policy's own options model."""
    common_keys = SolveOptions.model_fields.keys()
    errors: list[FieldError] = []
    common = _validate(SolveOptions, {k: v for k, v in raw.items() if k in common_keys}, errors)
    own = _validate(policy.options, {k: v for k, v in raw.items() if k not in common_keys}, errors)
    if common is not None and common.backend not in backend_names():
        errors.append(
            FieldError(
                ("options", "backend"),
                f"unknown backend {common.backend!r}; choose one of {', '.join(backend_names())}",
            )
        )
    if errors or common is None or own is None:
        known = [*common_keys, *policy.options.model_fields]
        raise InputError([_near(e, known) for e in errors])
    return common, own


def _near(error: FieldError, known: list[str]) -> FieldError:
    """An unknown option's error with the nearest option name, common or the policy's own."""
    if error.type != "extra_forbidden" or len(error.loc) != 2:
        return error
    hint = did_you_mean(str(error.loc[1]), known)
    return FieldError(error.loc, error.msg + hint, error.type)


def _validate(model: type[M], data: dict[str, Any], errors: list[FieldError]) -> M | None:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors.extend(InputError.from_validation(exc, ("options",)).errors)
        return None


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
        idle = np.flatnonzero((eff <= 0) & (x.sum(axis=1) <= 0)).tolist()
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
