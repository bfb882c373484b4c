"""A round with estimates: `POST /v1/rounds` (and `Client.rounds`) given an `estimate` (the
body `POST /v1/estimate` takes: the document kept, the progress observed since, new jobs)
first updates the estimate, then computes the round on the snapshot with the estimated
throughputs, and answers the round with the updated document beside it. Without `estimate`,
the request and the answer are the mechanism's own, unchanged.

The estimate's means replace the throughputs of the snapshot's jobs it covers (on the
snapshot's GPU types), and those of the snapshot's `job_pairs` whose two jobs it covers; the
snapshot still decides which jobs run and which pairs may share."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from apportion.estimation.document import EstimateDocument, EstimateInput
from apportion.estimation.posterior import estimate
from apportion.mechanism.document import RoundResult, RoundsInput, parse_rounds, round_result
from apportion.solver.errors import FieldError, InputError


class RoundsWithEstimate(RoundsInput):
    """The body of POST /v1/rounds with the optional `estimate`."""

    estimate: EstimateInput | None = Field(
        default=None,
        description="Update this estimate (POST /v1/estimate's body) and use its throughputs "
        "for the jobs and pairs it covers; the answer carries the updated document.",
    )


class EstimatedRound(RoundResult):
    """The round, and the estimate document updated from the progress observed."""

    estimate: EstimateDocument | None = Field(
        default=None, description="The updated estimate: keep it and send it back next round."
    )


@dataclass(frozen=True)
class Estimated:
    """A rounds request whose snapshot carries the estimate's throughputs."""

    request: RoundsInput
    document: EstimateDocument


def parse_rounds_with_estimate(data: Any) -> RoundsInput | Estimated:
    """The request (`mechanism.document.parse_rounds`), the estimate applied first when one
    is given; `InputError` names bad fields from the root (`estimate.…` for the estimate's)."""
    if isinstance(data, RoundsWithEstimate):
        data = data.model_dump(mode="json", exclude_unset=True)
    given = data.get("estimate") if isinstance(data, Mapping) else None
    if given is None:
        return parse_rounds(data if not isinstance(data, Mapping) else _without(data))
    try:
        document = estimate(given)
    except InputError as exc:
        located = [FieldError(("estimate", *e.loc), e.msg, e.type) for e in exc.errors]
        raise InputError(located) from None
    body = _without(data)
    body["snapshot"] = with_estimates(body.get("snapshot"), document)
    return Estimated(parse_rounds(body), document)


def round_with_estimate(
    request: RoundsInput | Estimated, options: Mapping[str, Any] | None = None
) -> RoundResult:
    """The round (`mechanism.document.round_result`), with the estimate beside it if any."""
    if isinstance(request, RoundsInput):
        return round_result(request, options)
    answer = round_result(request.request, options)
    return EstimatedRound.model_construct(
        _fields_set={*answer.model_fields_set, "estimate"},
        **dict(answer),
        estimate=request.document,
    )


def with_estimates(snapshot: Any, document: EstimateDocument) -> Any:
    """The snapshot document with the estimate's throughputs for the jobs (given as rows) and
    the job pairs it covers; anything else is left for the snapshot's own checks to name."""
    if not isinstance(snapshot, Mapping) or not isinstance(snapshot.get("jobs"), list):
        if isinstance(snapshot, Mapping) and isinstance(snapshot.get("jobs"), Mapping):
            msg = "with an `estimate`, give the snapshot's jobs as rows"
            raise InputError.single(("snapshot", "jobs"), msg)
        return snapshot
    names = _gpu_types(snapshot)
    rates = document.throughputs()
    jobs = [
        {**job, "throughput": _on(rates[job["id"]], names)}
        if isinstance(job, Mapping) and job.get("id") in rates
        else job
        for job in snapshot["jobs"]
    ]
    together = {(p["a"], p["b"]): p["throughput"] for p in document.job_pairs()}
    together.update(
        {(b, a): {g: v[::-1] for g, v in per.items()} for (a, b), per in together.items()}
    )
    out = {**snapshot, "jobs": jobs}
    if isinstance(snapshot.get("job_pairs"), list):
        out["job_pairs"] = [
            {**pair, "throughput": _on(together[(pair["a"], pair["b"])], names)}
            if isinstance(pair, Mapping) and (pair.get("a"), pair.get("b")) in together
            else pair
            for pair in snapshot["job_pairs"]
        ]
    return out


def _gpu_types(snapshot: Mapping[str, Any]) -> set[Any]:
    """The snapshot's GPU types: listed, or named by its nodes."""
    listed = [t.get("name") for t in snapshot.get("gpu_types") or [] if isinstance(t, Mapping)]
    nodes = [n.get("gpu_type") for n in snapshot.get("nodes") or [] if isinstance(n, Mapping)]
    return {*listed, *nodes}


def _on(per_type: Mapping[str, Any], names: set[Any]) -> dict[str, Any]:
    return {g: v for g, v in per_type.items() if g in names}


def _without(data: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k != "estimate"}
