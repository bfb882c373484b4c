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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, ValidationError

from apportion.api.body import SPOOL_BYTES, spool_dir
from apportion.api.problems import field_problems, problem_body, summary
from apportion.mechanism.document import parse_rounds, round_result
from apportion.solver.errors import FieldError, InputError
from apportion.solver.options import SolveOptions
from apportion.solver.pipeline import paused_gc, solve
from apportion.solver.registry import DEFAULT_POLICY, all_policies, find_policy
from apportion.solver.snapshot import parse_snapshot

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


@dataclass(frozen=True)
class Answer:
    status_code: int
    body: bytes
    media_type: str = JSON
    meta: dict[str, Any] = field(default_factory=dict)  # for logs and metrics, never bodies
    path: str | None = None  # a large body, in a spool file the server sends and removes


class Envelope(BaseModel):
    """The request's outer shape; the snapshot and options are checked by the pipeline."""

    model_config = ConfigDict(extra="forbid", strict=True)

    policy: str | None = None
    snapshot: dict[str, Any]
    options: dict[str, Any] | None = None


def warm_up() -> None:
    """Pay the one-off costs (imports, validators) before the first request does, and let a
    cancelled solve end its process at once: the pool's SIGTERM handler would run only when the
    solver's native code returns to Python (measured: the kill came ~3 s later)."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    all_policies()
    solve({"gpu_types": [{"name": "g", "count": 1}], "jobs": [{"id": "j", "throughput": {"g": 1}}]})


def solve_body(body: bytes | str, limits: Limits) -> Answer:
    """One request, start to end (`body` is the bytes, or the path of a spool file holding
    them); every failure is an answer, never an exception."""
    # Parsing a large body creates millions of acyclic objects: the cyclic collector's passes
    # over them doubled orjson's time (300,000 jobs: 0.79 s against 0.40 s).
    with paused_gc():
        return _solve(body, limits)


def _solve(body: bytes | str, limits: Limits) -> Answer:
    try:
        envelope = _envelope(Path(body).read_bytes() if isinstance(body, str) else body)
        options = _apply_limits(envelope, limits)
        _alarm(float(options["time_limit"]) + limits.grace)
        policy, started = envelope.policy, time.perf_counter()
        snapshot = parse_snapshot(envelope.snapshot)
        # The decoded document is no longer needed: at a million jobs it is a gigabyte that
        # would otherwise stay alive through the solve and the rendering.
        del envelope
        parsed = time.perf_counter() - started
        result = solve(snapshot, policy=policy, options=options)
        result.solver.validate_seconds += parsed
        result.solver.total_seconds += parsed
    except (_Malformed, InputError) as exc:
        return _refused(exc)
    finally:
        _alarm(0.0)
    meta = {
        "policy": result.policy,
        "status": result.status.value,
        "jobs": len(result.jobs),
        "solve_seconds": result.solver.total_seconds,
    }
    del snapshot  # the result is all that is needed now
    # Bytes straight from the serializer (model_dump_json would make a str, then bytes again).
    rendered = result.__pydantic_serializer__.to_json(result)
    if len(rendered) <= SPOOL_BYTES:
        return Answer(200, rendered, JSON, meta)
    with tempfile.NamedTemporaryFile(
        prefix="apportion-answer-", dir=spool_dir(), delete=False
    ) as out:
        out.write(rendered)
    return Answer(200, b"", JSON, meta, out.name)


def rounds_body(body: bytes | str, limits: Limits) -> Answer:
    """POST /v1/rounds start to end, like `solve_body`: parse, validate, solve when the request
    names a policy, compute the round and render it, all in this process."""
    with paused_gc():
        return _round(body, limits)


def _round(body: bytes | str, limits: Limits) -> Answer:
    started = time.perf_counter()
    try:
        # Parsing and a round take milliseconds to seconds: bounded like a solve without a limit
        # of its own, then by the policy's limit when the request names one.
        _alarm(limits.default_time_limit + limits.grace)
        request = parse_rounds(_decoded(Path(body).read_bytes() if isinstance(body, str) else body))
        options = None
        if request.policy is not None:
            envelope = Envelope(policy=request.policy, snapshot={}, options=request.options)
            options = _apply_limits(envelope, limits)
            _alarm(float(options["time_limit"]) + limits.grace)
        answer = round_result(request, options)
    except (_Malformed, InputError) as exc:
        return _refused(exc)
    finally:
        _alarm(0.0)
    meta = {
        "policy": f"rounds:{answer.policy or 'allocation'}",
        "status": answer.status.value if answer.status is not None else "round",
        "jobs": len(request.snapshot.jobs),
        "solve_seconds": time.perf_counter() - started,
    }
    return Answer(200, answer.__pydantic_serializer__.to_json(answer), JSON, meta)


def _refused(exc: _Malformed | InputError) -> Answer:
    """A body that is not JSON (400), or input refused field by field (422)."""
    if isinstance(exc, _Malformed):
        return _problem(400, exc.detail, [{"loc": ["body"], "msg": exc.detail, "type": "json"}])
    errors = field_problems(exc.errors)
    return _problem(422, summary(errors), errors)


class CompareEnvelope(BaseModel):
    """POST /v1/compare: `before`, and `after` or a `patch`, under one policy and options."""

    model_config = ConfigDict(extra="forbid", strict=True)

    policy: str | None = None
    before: dict[str, Any]
    after: dict[str, Any] | None = None
    patch: dict[str, Any] | None = None
    options: dict[str, Any] | None = None


def compare_body(body: bytes | str, limits: Limits) -> Answer:
    """POST /v1/compare start to end: both sides solved here, one after the other, each under
    the request's time limit (the alarm allows for both)."""
    with paused_gc():
        return _compare(body, limits)


def _compare(body: bytes | str, limits: Limits) -> Answer:
    from apportion.solver.compare import compare

    started = time.perf_counter()
    try:
        data = _decoded(Path(body).read_bytes() if isinstance(body, str) else body)
        try:
            request = CompareEnvelope.model_validate(data)
        except ValidationError as exc:
            raise InputError.from_validation(exc, ()) from None
        envelope = Envelope(policy=request.policy, snapshot=request.before, options=request.options)
        options = _apply_limits(envelope, limits)
        _alarm(2 * float(options["time_limit"]) + limits.grace)
        answer = compare(request.before, request.after, request.patch, request.policy, options)
    except (_Malformed, InputError) as exc:
        return _refused(exc)
    finally:
        _alarm(0.0)
    meta = {
        "policy": f"compare:{answer.policy}",
        "status": answer.status_after.value,
        "jobs": len(answer.jobs) + answer.unchanged,
        "solve_seconds": time.perf_counter() - started,
    }
    return Answer(200, answer.__pydantic_serializer__.to_json(answer), JSON, meta)


class _Malformed(Exception):
    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def _decoded(body: bytes) -> Any:
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise _Malformed(f"not valid JSON: {exc}") from None


def _envelope(body: bytes) -> Envelope:
    data = _decoded(body)
    try:
        return Envelope.model_validate(data)
    except ValidationError as exc:
        raise InputError.from_validation(exc, ()) from None


def _apply_limits(envelope: Envelope, limits: Limits) -> dict[str, Any]:
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


def _policy_default(envelope: Envelope) -> float | None:
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
