"""What can be asked for: every policy with the JSON Schema of its options, the options every
policy takes, and the backends with their solvers (`GET /v1/policies`, `Client.policies`)."""

from __future__ import annotations

from typing import Any

from apportion.solver.backends import AUTO, backend_names, get_backend
from apportion.solver.options import SolveOptions
from apportion.solver.registry import aliases, all_policies


def policy_catalog() -> dict[str, Any]:
    """The catalog as plain JSON-ready data; the service and the local client wrap it in their
    own response types."""
    return {
        "policies": [
            {
                "name": p.name,
                "summary": p.summary,
                "problem_class": p.problem_class,
                "aliases": list(aliases(p.name)),
                "options": p.options.model_json_schema(),
            }
            for p in all_policies().values()
        ],
        "common_options": SolveOptions.model_json_schema(),
        "backends": backend_names(),
        "solvers": {n: get_backend(n).available_solvers() for n in backend_names() if n != AUTO},
    }
