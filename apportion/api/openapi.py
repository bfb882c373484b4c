"""The OpenAPI document: FastAPI's, with each pooled route's body and answer typed as its route
declares them (`api.dispatch.post`), and the problem responses.

The bodies are validated in a worker process (the same checks as the library's); the document
only describes them, so that a generated client or a fuzzer builds valid requests. Helpers
here are shared by the routes' own schemas (`NOT_NULL`, `policy_names`, `options_model`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, create_model
from pydantic.config import JsonDict
from pydantic.json_schema import models_json_schema

from apportion.api.dispatch import MARK, TYPED
from apportion.api.problems import Problem
from apportion.solver.options import PolicyOptions, SolveOptions
from apportion.solver.registry import ENTRIES

REF = "#/components/schemas/{model}"
NOT_NULL: JsonDict = {"not": {"type": "null"}}
NULL: JsonDict = {"type": "null"}
PROBLEM_MEDIA = "application/problem+json"
PROBLEMS = {
    400: "the body is not valid JSON",
    408: "the body did not arrive in time",
    413: "the body is larger than the service accepts",
    415: "the body is not sent as `application/json`",
    422: "invalid snapshot or options (the bad fields in `errors`)",
    500: "the solver process failed (the service goes on)",
    503: "refused for now (every worker busy and the queue full, shutting down, no worker "
    "running): retry after `Retry-After` seconds",
    504: "the solve ran past its time limit and was stopped",
}


def camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def policy_names() -> Any:
    """The type of a field naming a policy: every name and alias."""
    return Literal[tuple(n for e in ENTRIES for n in e.names)]


def options_model(name: str, own: type[PolicyOptions]) -> type[BaseModel]:
    """The policy's own options and the common ones, flat, as a request takes them."""
    common = {key: (info.annotation, info) for key, info in SolveOptions.model_fields.items()}
    model: type[BaseModel] = create_model(  # type: ignore[call-overload]
        f"{camel(name)}Options",
        __base__=own,
        __doc__=f"Options of `{name}`: its own and the common ones (backend, time_limit, …).",
        **common,
    )
    return model


def document(base: dict[str, Any]) -> dict[str, Any]:
    """FastAPI's document (`base`) with the typed bodies and the problem responses of every
    route declared with `api.dispatch.post` (its operation marked with its name)."""
    typed = []
    for operations in base["paths"].values():
        post = operations.get("post", {})
        if MARK in post:
            typed.append((post, TYPED[post.pop(MARK)]))
    models: list[type[BaseModel]] = [Problem]
    for _, declared in typed:
        models += [*declared.body(), declared.answer]
    keyed = [(m, "validation") for m in dict.fromkeys(models)]
    _, top = models_json_schema(keyed, ref_template=REF)  # type: ignore[arg-type]
    base.setdefault("components", {}).setdefault("schemas", {}).update(top.get("$defs", {}))
    for post, declared in typed:
        variants = [{"$ref": REF.format(model=m.__name__)} for m in declared.body()]
        schema = variants[0] if len(variants) == 1 else {"oneOf": variants}
        media: dict[str, Any] = {"schema": schema}
        if declared.example is not None:
            media["example"] = declared.example  # what the page's "Try it out" fills in
        post["requestBody"] = {"required": True, "content": {"application/json": media}}
        post["responses"]["200"] = _response(declared.says, declared.answer.__name__)
        for code, why in PROBLEMS.items():
            post["responses"][str(code)] = _response(why, Problem.__name__, PROBLEM_MEDIA)
    return base


def _response(description: str, model: str, media: str = "application/json") -> dict[str, Any]:
    return {
        "description": description,
        "content": {media: {"schema": {"$ref": REF.format(model=model)}}},
    }
