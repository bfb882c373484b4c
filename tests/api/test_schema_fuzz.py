"""The OpenAPI document fuzzed against the running service (schemathesis): no 5xx, and every
response conforms to the documented status codes, content types and schemas. Bounded: a fixed
number of generated examples per operation, derandomized.

Not checked: that every schema-valid request is accepted. The snapshot's cross-field rules
(unique ids, throughputs on known GPU types, nodes matching counts, …) are no JSON Schema
construct, so a schema-valid snapshot may rightly get a 422 naming the field. Checked: no
schema-valid request is refused for a rule the schema does state (an empty cluster; compare's
one side; rounds' allocation or policy), the refusals schemathesis once found."""

from __future__ import annotations

from typing import Any

import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.api.service import running_service

EXAMPLES = 40
# The server's words for the rules the schema states (api/openapi.py, the snapshot's gpu_types).
STATED = (
    "the cluster is empty",
    "give exactly one of `after` and `patch`",
    "give the `allocation` to enact, or a `policy` to compute it",
    "give `allocation` or `policy`, not both",
    "options go with a `policy`",
    "the pair's time fraction per GPU type",
    "with `policy`, pair fractions come from the policy's answer",
)


@schemathesis.check
def refused_for_a_stated_rule(ctx: Any, response: Any, case: schemathesis.Case) -> None:
    """A schema-valid request refused for a rule the schema states: schema and server
    disagree."""
    if response.status_code != 422:
        return
    said = [e["msg"] for e in response.json().get("errors", [])]
    stated = [m for m in said if m.startswith(STATED)]
    assert not stated, f"the schema allowed what the server refused: {stated}"


CHECKS = [
    refused_for_a_stated_rule,
    schemathesis.checks.not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


def test_api_conforms_to_its_schema() -> None:
    with running_service(workers="1", queue_size="8", default_time_limit="5") as service:
        schema = schemathesis.openapi.from_url(f"{service.base}/openapi.json")
        operations = [result.ok() for result in schema.get_all_operations()]
        assert {op.path for op in operations} >= {"/v1/solve", "/v1/policies", "/readyz"}
        for operation in operations:

            @given(case=operation.as_strategy())
            @settings(
                max_examples=EXAMPLES,
                deadline=None,
                derandomize=True,
                phases=[Phase.generate],
                suppress_health_check=list(HealthCheck),
            )
            def conforms(case: schemathesis.Case) -> None:
                case.call_and_validate(checks=CHECKS)

            conforms()
