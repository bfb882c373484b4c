"""The HTTP service as deployed: `python -m uvicorn apportion.api.main:app` in a subprocess (configured by
bench's own APPORTION_* environment variables, if any), measured from outside with httpx.

Rows: POST /v1/solve throughput and latency from 1, 4 and 20 concurrent clients (gavel_mix_256,
max-min; targets at 20 clients: no errors or rejections, req/s ≥ 90 % of the 4-client figure,
p99 ≤ 3 × p50); /livez latency while one 500,000-job request is processed (target p99 ≤ 50 ms);
one 1,000,000-job request end to end with the service's peak memory (targets ≤ 15 s, ≤ 3 GB).

The service starts once for all rows, so the first row measured runs them all (`--only` with
one service row still runs every service measurement). It is stopped at the end, also on errors."""

from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any

import orjson

from apportion.refdata import FIXTURES
from apportion.refdata.synthetic import gavel_snapshot
from bench.harness import Case, Row
from bench.service_proc import Service, apportion_settings
from bench.service_rows import LIVEZ_P99, big_row, error_row, livez_row, load_rows

GROUP = "service"
POLICY = "max_min_fairness"
CLIENTS = (1, 4, 20)
LIVEZ_JOBS = 500_000
BIG_JOBS = 1_000_000
LOAD_NAME = "POST /v1/solve gavel_mix_256, max-min, {} client{}"
LIVEZ_NAME = f"/livez while one {LIVEZ_JOBS:,}-job max-min request runs"
BIG_NAME = f"one {BIG_JOBS:,}-job max-min request, end to end"


def request_body(snapshot: dict[str, Any]) -> bytes:
    return orjson.dumps({"policy": POLICY, "snapshot": snapshot})


def synthetic_body(jobs: int) -> tuple[bytes, int]:
    """The request for `gavel_snapshot(jobs, seed=0)` as bytes (built before any timing)."""
    snapshot = gavel_snapshot(jobs, seed=0)
    return request_body(snapshot), len(snapshot["gpu_types"])


class ServiceSuite:
    """Every service row from one service process, measured on the first row's call."""

    def __init__(self) -> None:
        names = [LOAD_NAME.format(n, "" if n == 1 else "s") for n in CLIENTS]
        self.cases = [Case(GROUP, name, dict, POLICY, runner=self.row) for name in names]
        self.cases.append(
            Case(GROUP, LIVEZ_NAME, dict, POLICY, target_seconds=LIVEZ_P99, runner=self.row)
        )
        self.cases.append(Case(GROUP, BIG_NAME, dict, POLICY, runner=self.row))
        self.rows: dict[str, Row] | None = None

    def row(self, case: Case) -> Row:
        if self.rows is None:
            self.rows = self.measure()
        return self.rows[case.name]

    def measure(self) -> dict[str, Row]:
        rows: dict[str, Row] = {}
        load_before = os.getloadavg()[0]  # other processes on the machine skew every row
        service = Service()
        try:
            service.wait_ready()
            self.measure_into(service, rows)
        except Exception as exc:  # the table still prints: the rows not measured say why
            traceback.print_exc(file=sys.stderr)
            print(f"service output (end):\n{service.log_tail()}", file=sys.stderr)
            failure = f"{type(exc).__name__}: {str(exc)[:300]}"
            for case in self.cases:
                rows.setdefault(case.name, error_row(case, failure))
        finally:
            stopped = service.stop()
        settings = ", ".join(f"{k}={v}" for k, v in sorted(apportion_settings().items()))
        print(
            f"service: {' '.join(service.command)} (pid {service.pid}, port {service.port}); "
            f"/livez answered after {service.startup_seconds:.2f} s; "
            f"APPORTION_* passed: {settings or 'none'}; {stopped}; machine's 1-min load average "
            f"{load_before:.2f} before, {os.getloadavg()[0]:.2f} after ({os.cpu_count()} CPUs)"
        )
        return rows

    def measure_into(self, service: Service, rows: dict[str, Row]) -> None:
        snapshot = json.loads((Path(FIXTURES) / "gavel_mix_256.json").read_text())
        shape = (len(snapshot["jobs"]), len(snapshot["gpu_types"]))
        loads = load_rows(self.cases[:3], service, request_body(snapshot), CLIENTS, shape)
        rows.update({row.case.name: row for row in loads})
        body, types = synthetic_body(LIVEZ_JOBS)
        rows[LIVEZ_NAME] = livez_row(self.cases[3], service, body, (LIVEZ_JOBS, types))
        body, types = synthetic_body(BIG_JOBS)
        rows[BIG_NAME] = big_row(self.cases[4], service, body, (BIG_JOBS, types))


def cases() -> list[Case]:
    return ServiceSuite().cases
