"""A round as a document: the request `POST /v1/rounds` takes and the answer it gives.

The request carries the snapshot (with `nodes`), either the `allocation` to enact or the
`policy` (and `options`) to compute it with, the seconds each job has `received` per GPU type,
the GPUs each job held last round (`previous`) and the space-sharing `pairs`. The answer is
`RoundResult`. Both are plain pydantic models, so the library, the worker and the OpenAPI
document share one definition; every error names its field from the request's root.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, ValidationError

from apportion.mechanism.priority import Rule
from apportion.mechanism.rounds import allocation_of, next_round
from apportion.mechanism.types import PairShare, Round
from apportion.solver.errors import FieldError, InputError
from apportion.solver.pipeline import solve
from apportion.solver.snapshot import Snapshot
from apportion.solver.snapshot.types import Name, NonNegative, Positive, PositiveCount, Strict
from apportion.solver.status import Status

Fraction = Annotated[StrictFloat, Field(ge=0, le=1, allow_inf_nan=False)]
PerType = dict[Name, NonNegative]


class PairInput(Strict):
    """Two jobs sharing the same GPUs (space sharing)."""

    a: Name = Field(description="Id of the first job.")
    b: Name = Field(description="Id of the second job.")
    allocation: dict[Name, Fraction] | None = Field(
        default=None,
        description="Time fraction the two share per GPU type (with `allocation`; with "
        "`policy` it comes from the policy's `summary.pair_allocations`).",
    )
    received: PerType = Field(
        default_factory=dict,
        description="Seconds the two have run together per GPU type (also part of each "
        "member's `received`).",
    )


class RoundsInput(Strict):
    """The body of POST /v1/rounds."""

    snapshot: Snapshot
    allocation: dict[Name, dict[Name, Fraction]] | None = Field(
        default=None,
        description="Job id → GPU type → time fraction X_jk (a result's `allocation`s). "
        "Give this or `policy`.",
    )
    policy: Name | None = Field(
        default=None, description="Compute the allocation with this policy instead."
    )
    options: dict[str, Any] | None = Field(
        default=None, description="The policy's options, as POST /v1/solve takes them."
    )
    received: dict[Name, PerType] = Field(
        description="Job id → GPU type → seconds received so far (alone or in a pair)."
    )
    previous: dict[Name, dict[Name, PositiveCount]] | None = Field(
        default=None, description="Job id → node id → GPUs it held last round."
    )
    pairs: list[PairInput] = Field(default_factory=list, description="Space-sharing pairs.")
    elapsed: NonNegative | None = Field(
        default=None,
        description="Seconds since `received` started counting (T); default: the least the "
        "received times imply. Under Gavel's rule it scales the priorities, never changes who "
        "runs.",
    )
    rule: Rule = Field(
        default=Rule.GAVEL,
        description="`gavel`: serve the largest share ÷ fraction received first (Gavel's "
        "rule); `deficit`: the largest seconds behind the share after this round, "
        "X·(T + L) − received (keeps one-GPU jobs within a round of their share; needs "
        "`round_seconds`).",
    )
    round_seconds: Positive | None = Field(
        default=None, description="The round's length L in seconds (needed by `deficit`)."
    )


class AssignmentOut(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    gpu_type: str
    placement: dict[str, int] = Field(description="Node id → GPUs.")
    kept: bool = Field(description="Holds exactly the GPUs it held last round (no preemption).")
    priority: float | None = Field(
        description="Priority it was served at; null = infinite (no time on that type yet)."
    )
    shared_with: str | None = Field(None, description="The pair partner on the same GPUs.")


class PairAllocationOut(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    a: str
    b: str
    allocation: dict[str, float]


class RoundResult(BaseModel):
    """The next round: who runs where, what stays idle, who waits and why."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    assignments: dict[str, AssignmentOut] = Field(description="Job id → its assignment.")
    idle: dict[str, int] = Field(description="GPU type → GPUs left free.")
    waiting: list[str] = Field(description="Jobs with time allocated that do not run.")
    reasons: dict[str, str] = Field(description="Waiting job → why.")
    allocation: dict[str, dict[str, float]] = Field(description="The allocation enacted.")
    pair_allocations: list[PairAllocationOut] = Field(default_factory=list)
    elapsed: float = Field(description="T, the seconds the priorities were computed with.")
    policy: str | None = Field(None, description="The policy solved, if one was.")
    status: Status | None = Field(None, description="That solve's status.")
    warnings: list[str] = Field(default_factory=list)


def parse_rounds(data: Any) -> RoundsInput:
    """Validate a decoded request body, or raise `InputError` naming every bad field."""
    try:
        request = RoundsInput.model_validate(data)
    except ValidationError as exc:
        raise InputError.from_validation(exc, ()) from None
    errors = _request_errors(request)
    if errors:
        raise InputError(errors)
    return request


def round_result(request: RoundsInput, options: Mapping[str, Any] | None = None) -> RoundResult:
    """The next round for a validated request; `options` replace the request's own (the
    service passes them with its limits applied). Raises `InputError` naming bad fields."""
    result, allocation, pairs = None, request.allocation or {}, _given_pairs(request.pairs)
    if request.policy is not None:
        chosen = request.options if options is None else options
        result = solve(request.snapshot, policy=request.policy, options=chosen)
        allocation, solved = allocation_of(result)
        pairs = _with_received(solved, request.pairs)
    rnd = next_round(
        request.snapshot,
        allocation,
        request.received,
        request.previous,
        pairs,
        elapsed=request.elapsed,
        rule=request.rule,
        round_seconds=request.round_seconds,
    )
    return RoundResult(
        assignments=_assignments(rnd),
        idle=rnd.idle,
        waiting=list(rnd.waiting),
        reasons=rnd.reasons,
        allocation={job: dict(per) for job, per in allocation.items()},
        pair_allocations=[
            PairAllocationOut(a=p.a, b=p.b, allocation=dict(p.allocation)) for p in pairs
        ],
        elapsed=rnd.elapsed,
        policy=None if result is None else result.policy,
        status=None if result is None else result.status,
        warnings=[] if result is None else list(result.warnings),
    )


def _request_errors(request: RoundsInput) -> list[FieldError]:
    """Exactly one source of the allocation, and pair fractions only where they belong."""
    errors = []
    if request.allocation is not None and request.policy is not None:
        errors.append(FieldError(("policy",), "give `allocation` or `policy`, not both"))
    elif request.allocation is None and request.policy is None:
        msg = "give the `allocation` to enact, or a `policy` to compute it"
        errors.append(FieldError(("allocation",), msg, "missing"))
    if request.options is not None and request.policy is None:
        errors.append(FieldError(("options",), "options go with a `policy`"))
    for i, pair in enumerate(request.pairs):
        if request.policy is None and pair.allocation is None:
            msg = "the pair's time fraction per GPU type"
            errors.append(FieldError(("pairs", i, "allocation"), msg, "missing"))
        elif request.policy is not None and pair.allocation is not None:
            msg = "with `policy`, pair fractions come from the policy's answer"
            errors.append(FieldError(("pairs", i, "allocation"), msg))
    return errors


def _given_pairs(pairs: Sequence[PairInput]) -> list[PairShare]:
    return [PairShare(p.a, p.b, dict(p.allocation or {}), dict(p.received)) for p in pairs]


def _with_received(solved: Sequence[PairShare], given: Sequence[PairInput]) -> list[PairShare]:
    """The policy's pairs with the time together the request reports for them (a pair the
    policy did not use has no time to serve and is left out)."""
    together = {frozenset((p.a, p.b)): dict(p.received) for p in given}
    return [
        PairShare(p.a, p.b, p.allocation, together.get(frozenset((p.a, p.b)), {})) for p in solved
    ]


def _assignments(rnd: Round) -> dict[str, AssignmentOut]:
    return {
        a.job: AssignmentOut(
            gpu_type=a.gpu_type,
            placement=a.placement,
            kept=a.kept,
            # JSON has no infinity: null stands for it (documented on the field).
            priority=a.priority if a.priority != float("inf") else None,
            shared_with=a.shared_with,
        )
        for a in rnd.assignments
    }
