"""Bytes on the wire, both ways: request bodies from the library's inputs, and the library's own
result types (or its errors) from the service's answers. Shared by the sync and async clients.

Answers are read into the types the library returns: `solver.result.SolveResult` for
`/v1/solve`, `solver.result.Comparison` for `/v1/compare`, `mechanism.document.RoundResult` for
`/v1/rounds`, `estimation.EstimateDocument` for `/v1/estimate`. A 400 or 422 problem becomes
`solver.errors.InputError` with each field's location as the library gives it (the service's
leading `"body"` removed), so code written against `solver.solve` handles both the same way.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import httpx
import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from apportion.client.errors import ServiceError, ServiceUnavailable, SolveStopped
from apportion.solver.errors import FieldError, InputError
from apportion.solver.result import Comparison, SolveResult

if TYPE_CHECKING:
    from apportion.estimation import EstimateDocument, EstimateInput
    from apportion.mechanism.document import RoundResult, RoundsInput
    from apportion.solver.snapshot import Snapshot

M = TypeVar("M", bound=BaseModel)
JSON_HEADERS = {"content-type": "application/json", "accept": "application/json"}
#: Connect within 10 s; wait for an answer up to the service's largest time limit (300 s by
#: default) plus its grace period and some slack.
DEFAULT_TIMEOUT = httpx.Timeout(10.0, read=330.0)
DETAIL_CHARACTERS = 300


class PolicyInfo(BaseModel):
    """One policy the service offers (`GET /v1/policies`)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    name: str
    summary: str
    problem_class: str
    aliases: list[str] = Field(default_factory=list)
    options: dict[str, Any] = Field(
        default_factory=dict, description="JSON Schema of the policy's own options."
    )


class PolicyCatalog(BaseModel):
    """Every policy with the JSON Schema of its options, the options every policy takes, and
    the backends and solvers available on that service."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    policies: list[PolicyInfo]
    common_options: dict[str, Any] = Field(default_factory=dict)
    backends: list[str] = Field(default_factory=list)
    solvers: dict[str, list[str]] = Field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.policies]

    def get(self, name: str) -> PolicyInfo:
        """The policy called `name` (or by one of its aliases); KeyError if there is none."""
        for policy in self.policies:
            if name == policy.name or name in policy.aliases:
                return policy
        raise KeyError(name)


def solve_body(
    snapshot: Snapshot | Mapping[str, Any],
    policy: str | None,
    options: Mapping[str, Any] | None,
) -> bytes:
    envelope: dict[str, Any] = {"snapshot": _plain(snapshot, "snapshot")}
    if policy is not None:
        envelope["policy"] = policy
    if options:
        envelope["options"] = dict(options)
    return _dumps(envelope)


def compare_body(
    before: Snapshot | Mapping[str, Any],
    after: Snapshot | Mapping[str, Any] | None,
    patch: Mapping[str, Any] | None,
    policy: str | None,
    options: Mapping[str, Any] | None,
) -> bytes:
    envelope: dict[str, Any] = {"before": _plain(before, "snapshot")}
    if after is not None:
        envelope["after"] = _plain(after, "snapshot")
    if patch is not None:
        envelope["patch"] = dict(patch)
    if policy is not None:
        envelope["policy"] = policy
    if options:
        envelope["options"] = dict(options)
    return _dumps(envelope)


def read_compare(response: httpx.Response) -> Comparison:
    check(response)
    return _parsed(response, Comparison)


def rounds_body(request: RoundsInput | Mapping[str, Any]) -> bytes:
    return _dumps(_plain(request, "request"))


def estimate_body(request: EstimateInput | Mapping[str, Any]) -> bytes:
    return _dumps(_plain(request, "request"))


def read_estimate(response: httpx.Response) -> EstimateDocument:
    from apportion.estimation import EstimateDocument  # only when used

    check(response)
    return _parsed(response, EstimateDocument)


def read_solve(response: httpx.Response) -> SolveResult:
    check(response)
    return _parsed(response, SolveResult)


def read_round(response: httpx.Response) -> RoundResult:
    """The round, with the updated estimate (`EstimatedRound`) when the request gave one:
    the type `LocalClient.rounds` returns for the same request."""
    from apportion.estimation.rounds import EstimatedRound  # the mechanism, only when used
    from apportion.mechanism.document import RoundResult

    check(response)
    with_estimate = _has_estimate(response)
    return _parsed(response, EstimatedRound if with_estimate else RoundResult)


def _has_estimate(response: httpx.Response) -> bool:
    # A byte search first: a round without an estimate (every old request) is parsed once.
    if b'"estimate"' not in response.content:
        return False
    try:
        answer = orjson.loads(response.content)
    except orjson.JSONDecodeError:
        return False
    return isinstance(answer, dict) and answer.get("estimate") is not None


def read_policies(response: httpx.Response) -> PolicyCatalog:
    check(response)
    return _parsed(response, PolicyCatalog)


def check(response: httpx.Response) -> None:
    """Raise what a non-2xx answer means: `InputError` for 400/422 (the request is wrong),
    `ServiceUnavailable` (503), `SolveStopped` (504), else `ServiceError`."""
    if response.is_success:
        return
    status, request_id = response.status_code, response.headers.get("x-request-id")
    detail, errors = _problem(response)
    if status in (400, 422):
        raise InputError([_field_error(e) for e in errors] or [FieldError((), detail)])
    if status == 503:
        raise ServiceUnavailable(detail, retry_after(response), request_id=request_id)
    if status == 504:
        raise SolveStopped(status, detail, request_id=request_id)
    raise ServiceError(status, detail, errors=errors, request_id=request_id)


def retry_after(response: httpx.Response) -> float | None:
    """Seconds the `Retry-After` header asks for (delta-seconds or an HTTP date), if any."""
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


def _plain(value: BaseModel | Mapping[str, Any], what: str) -> Any:
    if isinstance(value, BaseModel):
        # Only what was given: the service fills the same defaults.
        return value.model_dump(mode="json", exclude_unset=True)
    if isinstance(value, Mapping):
        return value
    raise TypeError(f"the {what} must be a mapping or a pydantic model, not {type(value).__name__}")


def _dumps(document: Any) -> bytes:
    try:
        return orjson.dumps(document, option=orjson.OPT_SERIALIZE_NUMPY, default=_listed)
    except orjson.JSONEncodeError as exc:
        raise TypeError(f"the request cannot be sent as JSON: {exc}") from None


def _listed(value: Any) -> Any:
    """What orjson does not write itself, as a list: a masked array (masked entries null), an
    array of strings, a numpy scalar; and a model inside a mapping (an estimate document sent
    back as it was returned), as its JSON document."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def _parsed(response: httpx.Response, model: type[M]) -> M:
    try:
        return model.model_validate_json(response.content)
    except ValidationError as exc:
        detail = f"the answer is not a {model.__name__}: {exc.errors()[0]['msg']}"
        raise ServiceError(response.status_code, detail) from None


def _problem(response: httpx.Response) -> tuple[str, list[dict[str, Any]]]:
    """The problem's detail and field errors; a non-problem answer (a proxy's HTML page) is
    reported by its first characters."""
    try:
        document = orjson.loads(response.content)
    except orjson.JSONDecodeError:
        return response.text[:DETAIL_CHARACTERS] or response.reason_phrase, []
    if not isinstance(document, dict):
        return str(document)[:DETAIL_CHARACTERS], []
    errors = [e for e in document.get("errors") or [] if isinstance(e, dict)]
    detail = document.get("detail") or document.get("title") or response.reason_phrase
    return str(detail), errors


def _field_error(entry: dict[str, Any]) -> FieldError:
    loc = [part for part in entry.get("loc") or [] if isinstance(part, str | int)]
    if loc[:1] == ["body"]:
        loc = loc[1:]
    return FieldError(tuple(loc), str(entry.get("msg", "")), str(entry.get("type", "value_error")))
