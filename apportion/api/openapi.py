"""The request body's schema in the OpenAPI document: one variant per policy, each with the
options that policy takes, so a generated client or a fuzzer can build valid requests.

The body is validated by the solver pipeline in a worker process (the same checks as the
library's); this module only describes it.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.json_schema import models_json_schema

from apportion.api.problems import Problem
from apportion.mechanism.document import RoundResult, RoundsInput
from apportion.solver.options import PolicyOptions, SolveOptions
from apportion.solver.registry import ENTRIES, all_policies
from apportion.solver.result import Comparison, SolveResult
from apportion.solver.snapshot import Snapshot

REF = "#/components/schemas/{model}"


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def _options_model(name: str, own: type[PolicyOptions]) -> type[BaseModel]:
    """The policy's own options and the common ones, flat, as a request takes them."""
    common = {key: (info.annotation, info) for key, info in SolveOptions.model_fields.items()}
    model: type[BaseModel] = create_model(  # type: ignore[call-overload]
        f"{_camel(name)}Options",
        __base__=own,
        __doc__=f"Options of `{name}`: its own and the common ones (backend, time_limit, …).",
        **common,
    )
    return model


@cache
def request_variants() -> tuple[type[BaseModel], ...]:
    """One request model per policy, `policy` naming it (or an alias)."""
    policies = all_policies()
    variants = []
    for entry in ENTRIES:
        policy = policies[entry.name]
        names: Any = Literal[(entry.name, *entry.aliases)]
        variants.append(
            create_model(
                f"{_camel(entry.name)}Request",
                __config__=ConfigDict(extra="forbid"),
                __doc__=policy.summary,
                policy=(names, Field(description="The policy (or one of its aliases).")),
                snapshot=(Snapshot, ...),
                options=_optional(_options_model(entry.name, policy.options)),
            )
        )
    variants.append(_default_variant())
    return tuple(variants)


def _optional(model: type[BaseModel]) -> Any:
    """A field of type `model | None`, absent by default."""
    return (model | None, Field(default=None))


def _default_variant() -> type[BaseModel]:
    """No `policy`: the snapshot's own, else max-min fairness, with max-min's options."""
    max_min = all_policies()["max_min_fairness"]
    return create_model(
        "SnapshotPolicyRequest",
        __config__=ConfigDict(extra="forbid"),
        __doc__="The policy named by the snapshot, else max_min_fairness.",
        snapshot=(Snapshot, ...),
        options=_optional(_options_model("default", max_min.options)),
    )


@cache
def rounds_request() -> type[BaseModel]:
    """The body of /v1/rounds: `RoundsInput` with `policy` naming a policy or alias."""
    names: Any = Literal[tuple(n for e in ENTRIES for n in (e.name, *e.aliases))]
    model: type[BaseModel] = create_model(
        "RoundsRequest",
        __base__=RoundsInput,
        __doc__="The next round for an `allocation`, or for the allocation `policy` computes "
        "(its options as POST /v1/solve documents them per policy).",
        policy=(names | None, Field(None, description="Compute the allocation with this policy.")),
    )
    return model


@cache
def compare_request() -> type[BaseModel]:
    """The body of /v1/compare: `before`, and `after` or a `patch`, under one policy."""
    from apportion.solver.compare import Patch

    names: Any = Literal[tuple(n for e in ENTRIES for n in (e.name, *e.aliases))]
    model: type[BaseModel] = create_model(
        "CompareRequest",
        __config__=ConfigDict(extra="forbid"),
        __doc__="Two snapshots, or one and a patch of it, solved under one policy with the "
        "same options (as POST /v1/solve documents them per policy).",
        policy=(names | None, Field(None, description="Default: the `before` snapshot's.")),
        before=(Snapshot, ...),
        after=(Snapshot | None, Field(None, description="Give this or `patch`.")),
        patch=(Patch | None, Field(None, description="Changes to `before`.")),
        options=(dict[str, Any] | None, None),
    )
    return model


@cache
def schemas() -> tuple[dict[str, Any], dict[str, Any]]:
    """(the request body's schema, the component schemas it and the responses refer to)."""
    variants = request_variants()
    models = (*variants, rounds_request(), compare_request(), SolveResult, RoundResult)
    models = (*models, Comparison, Problem)
    keyed = [(m, "validation") for m in models]
    _, top = models_json_schema(keyed, ref_template=REF)  # type: ignore[arg-type]
    body = {"oneOf": [{"$ref": REF.format(model=v.__name__)} for v in variants]}
    return body, dict(top.get("$defs", {}))


def document(
    base: dict[str, Any],
    solve_paths: list[str],
    rounds_paths: list[str] | None = None,
    compare_paths: list[str] | None = None,
) -> dict[str, Any]:
    """FastAPI's document with the typed request bodies and the problem responses."""
    body, defs = schemas()
    components = base.setdefault("components", {}).setdefault("schemas", {})
    components.update(defs)
    rounds_body = {"$ref": REF.format(model=rounds_request().__name__)}
    typed: list[tuple[str, dict[str, Any], str, type[BaseModel]]]
    typed = [(p, body, "the result document", SolveResult) for p in solve_paths]
    typed += [(p, rounds_body, "the next round", RoundResult) for p in rounds_paths or []]
    compare_body = {"$ref": REF.format(model=compare_request().__name__)}
    typed += [(p, compare_body, "the differences", Comparison) for p in compare_paths or []]
    for path, schema, answer, model in typed:
        post = base["paths"][path]["post"]
        post["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": schema}},
        }
        post["responses"]["200"] = _response(answer, model.__name__)
        for code, why in PROBLEMS.items():
            post["responses"][str(code)] = _response(why, Problem.__name__, PROBLEM_MEDIA)
    return base


def _response(description: str, model: str, media: str = "application/json") -> dict[str, Any]:
    return {
        "description": description,
        "content": {media: {"schema": {"$ref": REF.format(model=model)}}},
    }


PROBLEM_MEDIA = "application/problem+json"
PROBLEMS = {
    400: "the body is not valid JSON",
    408: "the body did not arrive in time",
    413: "the body is larger than the service accepts",
    422: "invalid snapshot or options (every bad field in `errors`)",
    500: "the solver process failed (the service goes on)",
    503: "every worker busy and the queue full: retry after `Retry-After` seconds",
    504: "the solve ran past its time limit and was stopped",
}
