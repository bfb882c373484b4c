"""The OpenAPI document fuzzed against the running service (schemathesis): no 5xx, and every
response conforms to the documented status codes, content types and schemas. Bounded: a fixed
number of generated examples per operation, derandomized.

Not checked: that every schema-valid request is accepted. The snapshot's cross-field rules
(unique ids, throughputs on known GPU types, nodes matching counts, …) are no JSON Schema
construct, so a schema-valid snapshot may rightly get a 422 naming the field."""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.api.service import running_service

EXAMPLES = 40
CHECKS = [
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
