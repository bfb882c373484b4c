"""`python -m apportion.api` on a terminal: every line it writes on stderr, uvicorn's startup,
access and shutdown lines as well as the service's own request lines, is one JSON object."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from apportion.api.examples import SOLVE
from tests.api.service import running_service


def test_every_line_on_stderr_is_json(tmp_path: Path) -> None:
    log = tmp_path / "service.log"
    with log.open("wb") as stderr, running_service(main=True, stderr=stderr, workers="1") as svc:
        assert httpx.get(f"{svc.base}/v1/policies", timeout=30).status_code == 200
        assert httpx.post(f"{svc.base}/v1/solve", json=SOLVE, timeout=60).status_code == 200
        refused = httpx.post(f"{svc.base}/v1/solve", json={"snapshot": {}}, timeout=60)
        assert refused.status_code == 422
    lines = log.read_text().splitlines()
    records = []
    for line in lines:
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            raise AssertionError(f"not JSON: {line!r}") from None
    assert all(isinstance(r, dict) and "event" in r and "level" in r for r in records)
    access = [(r["method"], r["path"], r["status"]) for r in records if r["event"] == "access"]
    assert ("GET", "/v1/policies", 200) in access
    assert ("POST", "/v1/solve", 422) in access
    said = " ".join(r["event"] for r in records)
    assert "Uvicorn running on" in said and "Shutting down" in said  # uvicorn's own, as JSON
