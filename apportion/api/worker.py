"""What runs in a solver process, for every endpoint alike: the request body in, the response
body out.

Parsing, validation, the work and the rendering of its answer all happen here, off the
service's event loop; the service only moves bytes. An endpoint (declared once, in its route
module) says how to read its body, which policy and options bound it, and what work it does;
`handle` does the rest. The work is bounded twice: by its time limit inside the solver, and by
an alarm that ends this process `grace` seconds after it (the pool then answers 504 and starts
a fresh process).
"""

from __future__ import annotations

import signal
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

import orjson
from pydantic import BaseModel, ValidationError

from apportion.api.body import SPOOL_BYTES, spool_dir
from apportion.api.problems import field_problems, problem_body, summary
from apportion.solver.collector import paused_gc
from apportion.solver.errors import FieldError, InputError
from apportion.solver.options import SolveOptions
from apportion.solver.pipeline import solve
from apportion.solver.registry import DEFAULT_POLICY, all_policies, find_policy
from apportion.solver.result.render import answer_json

R = TypeVar("R")
M = TypeVar("M", bound=BaseModel)
JSON = "application/json"
PROBLEM = "application/problem+json"
#: What bounds a request: the policy (its default time limit) and the options, or None for
#: the service's default bound alone.
Limited = tuple[str | None, Mapping[str, Any] | None] | None
#: The work's answer (rendered as JSON) and what logs and metrics say of it (never bodies).
Done = tuple[BaseModel, dict[str, Any]]


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
class RenderedResponse:
    """An HTTP response a worker rendered: what the server sends as it is."""

    status_code: int
    body: bytes
    media_type: str = JSON
    meta: dict[str, Any] = field(default_factory=dict)  # for logs and metrics, never bodies
    path: str | None = None  # a large body, in a spool file the server sends and removes


#: The modules that declare endpoints: their work travels to a worker by reference, so each
#: worker imports them while warming up (not on its first request).
DECLARED_IN: set[str] = set()


@dataclass(frozen=True)
class Endpoint(Generic[R]):
    """The work of one endpoint, as a worker runs it (module-level functions: it travels to
    the worker by reference).

    - read: the decoded body as the endpoint's request (raises `InputError`)
    - limited: the policy and options whose limits bound it (None: the service's default)
    - run: the work, with the options under the service's limits
    """

    read: Callable[[Any], R]
    limited: Callable[[R], Limited]
    run: Callable[[R, dict[str, Any] | None], Done]

    def __post_init__(self) -> None:
        DECLARED_IN.add(self.run.__module__)

    def __call__(self, body: bytes | str, limits: Limits) -> RenderedResponse:
        return handle(body, limits, self)


def warm_up() -> None:
    """Pay the one-off costs (imports, validators) before the first request does, and let a
    cancelled solve end its process at once: the pool's SIGTERM handler would run only when the
    solver's native code returns to Python, seconds later."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    all_policies()
    solve({"gpu_types": [{"name": "g", "count": 1}], "jobs": [{"id": "j", "throughput": {"g": 1}}]})


def handle(body: bytes | str, limits: Limits, endpoint: Endpoint[Any]) -> RenderedResponse:
    """One request, start to end (`body` is the bytes, or the path of a spool file holding
    them): parse, apply the service's limits, run, render; every failure is a response, never
    an exception. Bounded first by the service's default limit, then by the request's own."""
    # Parsing a large body creates millions of acyclic objects: the cyclic collector's passes
    # over them would cost as much again as the parsing itself (the `service` bench rows).
    with paused_gc():
        try:
            _alarm(limits.default_time_limit + limits.grace)
            request = endpoint.read(_decoded(_bytes(body)))
            wanted = endpoint.limited(request)
            options = None if wanted is None else apply_limits(*wanted, limits)
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
        return RenderedResponse(200, rendered, JSON, meta)
    return _spooled(rendered, meta, Path(limits.answers) if limits.answers else spool_dir())


def validated(model: type[M], data: Any) -> M:
    """`data` as `model`, or `InputError` naming each bad field."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise InputError.from_validation(exc, ()) from None


def apply_limits(
    policy: str | None, options: Mapping[str, Any] | None, limits: Limits
) -> dict[str, Any]:
    """The request's options under the service's rules: verbose only where allowed, threads
    within the service's, and a time limit always (the request's, else `policy`'s default,
    else the service's), never above the cap."""
    options = dict(options or {})
    errors: list[FieldError] = []
    if options.get("verbose") and not limits.allow_verbose:
        errors.append(FieldError(("options", "verbose"), "solver logs are off on this service"))
    common = {k: v for k, v in options.items() if k in SolveOptions.model_fields}
    try:
        checked = SolveOptions.model_validate(common)
    except ValidationError as exc:
        raise InputError([*errors, *InputError.from_validation(exc, ("options",)).errors]) from None
    threads = checked.threads or limits.threads
    if threads > limits.threads:
        errors.append(FieldError(("options", "threads"), f"at most {limits.threads} here"))
    limit = checked.time_limit
    if limit is not None and limit > limits.max_time_limit:
        errors.append(
            FieldError(("options", "time_limit"), f"at most {limits.max_time_limit:g} s here")
        )
    if errors:
        raise InputError(errors)
    if limit is None:
        limit = min(_policy_default(policy) or limits.default_time_limit, limits.max_time_limit)
    return {**options, "time_limit": limit, "threads": threads}


def _policy_default(named: str | None) -> float | None:
    policy = find_policy(named or DEFAULT_POLICY)
    return None if policy is None else policy.defaults.time_limit


def _bytes(body: bytes | str) -> bytes:
    return Path(body).read_bytes() if isinstance(body, str) else body


def _spooled(rendered: bytes, meta: dict[str, Any], folder: Path) -> RenderedResponse:
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
        body = problem_body(503, detail)
        return RenderedResponse(503, body, PROBLEM, {**meta, "status": "no_room"})
    return RenderedResponse(200, b"", JSON, meta, name)


def _refused(exc: _Malformed | InputError) -> RenderedResponse:
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


def _alarm(seconds: float) -> None:
    """End this process `seconds` from now (0 cancels): the default action of SIGALRM, which
    no solver's native code can delay."""
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.0))


def _problem(status: int, detail: str, errors: list[dict[str, Any]]) -> RenderedResponse:
    body = problem_body(status, detail, errors)
    return RenderedResponse(status, body, PROBLEM, {"status": "invalid"})
