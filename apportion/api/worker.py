"""What runs in a solver process: the request body in, the response body out.

Parsing, validation, the solve and the rendering of the result all happen here, off the
service's event loop; the service only moves bytes. A solve is bounded twice: by its time limit
inside the solver, and by an alarm that ends this process `grace` seconds after it (the pool
then answers 504 and starts a fresh process).
"""

from __future__ import annotations

import signal
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

import orjson
from pydantic import BaseModel, ValidationError

from apportion.api.body import SPOOL_BYTES, spool_dir
from apportion.api.problems import field_problems, problem_body, summary
from apportion.api.schemas import CompareBody, SolveBody
from apportion.mechanism.document import RoundsInput, parse_rounds, round_result
from apportion.solver.collector import paused_gc
from apportion.solver.errors import FieldError, InputError
from apportion.solver.options import SolveOptions
from apportion.solver.pipeline import checked_request, solve
from apportion.solver.registry import DEFAULT_POLICY, all_policies, find_policy
from apportion.solver.result.render import answer_json
from apportion.solver.snapshot import Snapshot, parse_snapshot

R = TypeVar("R")
M = TypeVar("M", bound=BaseModel)
JSON = "application/json"
PROBLEM = "application/problem+json"


@dataclass(frozen=True)
class Limits:
    """The service's rules for every request (from its settings)."""

    default_time_limit: float
    max_time_limit: float
    threads: int
    allow_verbose: bool
    grace: float
    answers: str = ""  # the folder for large answers (this worker's, in the service's spool)


@dataclass(frozen=True)
class Answer:
    status_code: int
    body: bytes
    media_type: str = JSON
    meta: dict[str, Any] = field(default_factory=dict)  # for logs and metrics, never bodies
    path: str | None = None  # a large body, in a spool file the server sends and removes


def warm_up() -> None:
    """Pay the one-off costs (imports, validators) before the first request does, and let a
    cancelled solve end its process at once: the pool's SIGTERM handler would run only when the
    solver's native code returns to Python, seconds later."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    all_policies()
    solve({"gpu_types": [{"name": "g", "count": 1}], "jobs": [{"id": "j", "throughput": {"g": 1}}]})


@dataclass(frozen=True)
class Endpoint(Generic[R]):
    """What differs between the requests a worker serves; `handle` does the rest.

    - read: the decoded body as the endpoint's request model (raises `InputError`)
    - limited: the policy and options whose limits apply (None: the service's default bound)
    - run: the work, with the options under the service's limits; returns the answer model and
      what the logs and metrics say of it (never bodies)
    """

    read: Callable[[Any], R]
    limited: Callable[[R], SolveBody | None]
    run: Callable[[R, dict[str, Any] | None], tuple[BaseModel, dict[str, Any]]]


def handle(body: bytes | str, limits: Limits, endpoint: Endpoint[Any]) -> Answer:
    """One request, start to end (`body` is the bytes, or the path of a spool file holding
    them): parse, apply the service's limits, run, render; every failure is an answer, never an
    exception. Bounded first by the service's default limit, then by the request's own."""
    # Parsing a large body creates millions of acyclic objects: the cyclic collector's passes
    # over them would cost as much again as the parsing itself (the `service` bench rows).
    with paused_gc():
        try:
            _alarm(limits.default_time_limit + limits.grace)
            request = endpoint.read(_decoded(_bytes(body)))
            wanted = endpoint.limited(request)
            options = None if wanted is None else _apply_limits(wanted, limits)
            if options is not None:
                _alarm(float(options["time_limit"]) + limits.grace)
            answer, meta = endpoint.run(request, options)
        except (_Malformed, InputError) as exc:
            return _refused(exc)
        finally:
            _alarm(0.0)
        # Bytes straight from the serializer (model_dump_json would make a str, then bytes);
        # jobs written as columns go from their arrays to JSON.
        rendered = answer_json(answer)
    if len(rendered) <= SPOOL_BYTES:
        return Answer(200, rendered, JSON, meta)
    return _spooled(rendered, meta, Path(limits.answers) if limits.answers else spool_dir())


def _bytes(body: bytes | str) -> bytes:
    return Path(body).read_bytes() if isinstance(body, str) else body


def _read_solve(data: Any) -> SolveBody:
    return _validated(SolveBody, data)


def _run_solve(
    request: SolveBody, options: dict[str, Any] | None
) -> tuple[BaseModel, dict[str, Any]]:
    started = time.perf_counter()
    snapshot = _parsed(request)
    # The decoded document is no longer needed: at a million jobs it is a gigabyte that would
    # otherwise stay alive through the solve and the rendering.
    request.snapshot = {}
    parsed = time.perf_counter() - started
    result = solve(snapshot, policy=request.policy, options=options)
    del snapshot  # the result is all that is needed now
    result.solver.validate_seconds += parsed
    result.solver.total_seconds += parsed
    meta = {
        "policy": result.policy,
        "status": result.status.value,
        "jobs": len(result.jobs),
        "solve_seconds": result.solver.total_seconds,
    }
    return result, meta


def _limited_rounds(request: RoundsInput) -> SolveBody | None:
    # A round takes milliseconds to seconds: the service's default bound, then the policy's
    # limit when the request names one.
    if request.policy is None:
        return None
    return SolveBody(policy=request.policy, snapshot={}, options=request.options)


def _run_rounds(
    request: RoundsInput, options: dict[str, Any] | None
) -> tuple[BaseModel, dict[str, Any]]:
    started = time.perf_counter()
    answer = round_result(request, options)
    meta = {
        "policy": f"rounds:{answer.policy or 'allocation'}",
        "status": answer.status.value if answer.status is not None else "round",
        "jobs": len(request.snapshot.jobs),
        "solve_seconds": time.perf_counter() - started,
    }
    return answer, meta


def _read_compare(data: Any) -> CompareBody:
    return _validated(CompareBody, data)


def _limited_compare(request: CompareBody) -> SolveBody:
    # Both sides share one time limit: compare is bounded like a solve.
    return SolveBody(policy=request.policy, snapshot=request.before, options=request.options)


def _run_compare(
    request: CompareBody, options: dict[str, Any] | None
) -> tuple[BaseModel, dict[str, Any]]:
    from apportion.solver.compare import compare

    started = time.perf_counter()
    answer = compare(request.before, request.after, request.patch, request.policy, options)
    meta = {
        "policy": f"compare:{answer.policy}",
        "status": answer.status_after.value,
        "jobs": len(answer.jobs) + answer.unchanged,
        "solve_seconds": time.perf_counter() - started,
    }
    return answer, meta


SOLVE = Endpoint(_read_solve, lambda request: request, _run_solve)
ROUNDS = Endpoint(parse_rounds, _limited_rounds, _run_rounds)
COMPARE = Endpoint(_read_compare, _limited_compare, _run_compare)


def solve_body(body: bytes | str, limits: Limits) -> Answer:
    """POST /v1/solve in a worker: `{policy, snapshot, options}` → the result document."""
    return handle(body, limits, SOLVE)


def rounds_body(body: bytes | str, limits: Limits) -> Answer:
    """POST /v1/rounds in a worker: the next round (solving the policy when one is named)."""
    return handle(body, limits, ROUNDS)


def compare_body(body: bytes | str, limits: Limits) -> Answer:
    """POST /v1/compare in a worker: both sides solved here within one time limit."""
    return handle(body, limits, COMPARE)


def _spooled(rendered: bytes, meta: dict[str, Any], folder: Path) -> Answer:
    """A large answer as a file the server sends; a spool without room for it is a 503."""
    name = ""
    try:
        with tempfile.NamedTemporaryFile(
            prefix="apportion-answer-", dir=folder, delete=False
        ) as out:
            name = out.name
            out.write(rendered)
    except OSError as exc:
        if name:
            Path(name).unlink(missing_ok=True)
        detail = f"no room in the spool for the answer ({exc.strerror}); retry later"
        return Answer(503, problem_body(503, detail), PROBLEM, {**meta, "status": "no_room"})
    return Answer(200, b"", JSON, meta, name)


def _refused(exc: _Malformed | InputError) -> Answer:
    """A body that is not JSON (400), or input refused field by field (422)."""
    if isinstance(exc, _Malformed):
        return _problem(400, exc.detail, [{"loc": ["body"], "msg": exc.detail, "type": "json"}])
    errors = field_problems(exc.errors)
    return _problem(422, summary(errors), errors)


class _Malformed(Exception):
    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def _decoded(body: bytes) -> Any:
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise _Malformed(f"not valid JSON: {exc}") from None


def _parsed(request: SolveBody) -> Snapshot:
    """The request's snapshot; when it is invalid, the problems of the policy and options are
    reported with its own (every field at once, as `solve` reports them)."""
    try:
        return parse_snapshot(request.snapshot)
    except InputError as exc:
        named = request.policy or request.snapshot.get("policy")
        checked = checked_request(named if isinstance(named, str) else None, request.options or {})
        more = checked.errors if isinstance(checked, InputError) else ()
        raise InputError([*exc.errors, *more]) from None


def _validated(model: type[M], data: Any) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise InputError.from_validation(exc, ()) from None


def _apply_limits(envelope: SolveBody, limits: Limits) -> dict[str, Any]:
    """The request's options under the service's rules: verbose only where allowed, threads
    within the service's, and a time limit always (the request's, else the policy's default,
    else the service's), never above the cap."""
    options = dict(envelope.options or {})
    errors: list[FieldError] = []
    if options.get("verbose") and not limits.allow_verbose:
        errors.append(FieldError(("options", "verbose"), "solver logs are off on this service"))
    common = {k: v for k, v in options.items() if k in SolveOptions.model_fields}
    try:
        validated = SolveOptions.model_validate(common)
    except ValidationError as exc:
        raise InputError([*errors, *InputError.from_validation(exc, ("options",)).errors]) from None
    threads = validated.threads or limits.threads
    if threads > limits.threads:
        errors.append(FieldError(("options", "threads"), f"at most {limits.threads} here"))
    limit = validated.time_limit
    if limit is not None and limit > limits.max_time_limit:
        errors.append(
            FieldError(("options", "time_limit"), f"at most {limits.max_time_limit:g} s here")
        )
    if errors:
        raise InputError(errors)
    if limit is None:
        limit = min(_policy_default(envelope) or limits.default_time_limit, limits.max_time_limit)
    return {**options, "time_limit": limit, "threads": threads}


def _policy_default(envelope: SolveBody) -> float | None:
    named = envelope.policy or envelope.snapshot.get("policy") or DEFAULT_POLICY
    policy = find_policy(named) if isinstance(named, str) else None
    return None if policy is None else policy.defaults.time_limit


def _alarm(seconds: float) -> None:
    """End this process `seconds` from now (0 cancels): the default action of SIGALRM, which
    no solver's native code can delay."""
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.0))


def _problem(status: int, detail: str, errors: list[dict[str, Any]]) -> Answer:
    return Answer(status, problem_body(status, detail, errors), PROBLEM, {"status": "invalid"})
