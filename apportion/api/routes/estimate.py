"""POST /v1/estimate: throughputs estimated from a reference table, profiles and observed
progress, computed in a worker process; stateless (the caller sends back the document it
was given, with what it has seen since)."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter

from apportion.api.dispatch import Typed, post
from apportion.api.worker import Done, Endpoint, Limited
from apportion.estimation import EstimateDocument, EstimateInput, estimate, parse_estimate

router = APIRouter(tags=["estimate"])

EXAMPLE: dict[str, Any] = {
    "jobs": [
        {"id": "known", "job_type": "ResNet-18 (batch size 32)"},
        {"id": "new", "profiles": {"v100": 12.0}},
    ],
    "observations": [
        {"job": "known", "gpu_type": "v100", "steps": 10000.0, "seconds": 360.0},
    ],
}


def _limited(request: EstimateInput) -> Limited:
    # No policy: an estimate takes milliseconds, bounded by the service's default.
    return None


def _run(request: EstimateInput, options: dict[str, Any] | None) -> Done:
    started = time.perf_counter()
    answer = estimate(request)
    meta = {
        "policy": "estimate",
        "status": "estimated",
        "jobs": len(answer.jobs),
        "solve_seconds": time.perf_counter() - started,
    }
    return answer, meta


ESTIMATE = Endpoint(parse_estimate, _limited, _run)
post(
    router,
    "/estimate",
    ESTIMATE,
    Typed(lambda: (EstimateInput,), EstimateDocument, "the estimate document", EXAMPLE),
    name="estimate_throughputs",
    summary="Throughputs estimated from profiles and observed progress, with uncertainty",
    description="The body is `{estimate, reference, jobs, observations, forget, pairs, "
    "options}`: the document a previous call returned (or none), new jobs (a reference job "
    "type's name, or profiles alone and beside reference types), progress observed (steps over "
    "seconds, per GPU type and partner). The answer is the document: every job's steps/s "
    "alone and every pair's together, each with a relative sigma and an interval, and the "
    "evidence so far; send it back next time. A bad field is a problem (RFC 9457) naming it.",
)
