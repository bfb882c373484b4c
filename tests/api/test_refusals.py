"""Every refusal is a 503 problem with Retry-After, checked on the real server in a subprocess:
under a worker-kill chaos run (ten clients, the solver processes killed again and again, warm
or warming up, idle or busy), and when SIGTERM arrives while a request's body is still on its
way. No request is answered 500."""

from __future__ import annotations

import os
import random
import signal
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import orjson

from tests.api.service import PROBE, Service, no_core_dumps, open_request, running_service

CLIENTS = 10
CHAOS_SECONDS = 12.0


def _snapshot(gpus: int, jobs: int) -> dict[str, Any]:
    return {
        "gpu_types": [{"name": "g", "count": gpus}],
        "jobs": [{"id": f"j{i}", "throughput": {"g": 1.0}} for i in range(jobs)],
    }


def _check(response: httpx.Response, gpus: int, jobs: int) -> str | None:
    """What is wrong with `response` to a max-min request of `jobs` identical one-GPU jobs on
    `gpus` GPUs (None: nothing). By hand: each job gets the same share, min(1, gpus/jobs)."""
    if response.status_code == 503:
        if response.headers.get("content-type") != "application/problem+json":
            return f"503 without a problem document: {response.text[:200]}"
        if not response.headers.get("retry-after", "").isdigit():
            return f"503 without Retry-After: {response.headers}"
        body = response.json()
        return None if body["status"] == 503 and body["detail"] else f"bad problem {body}"
    if response.status_code != 200:
        return f"{response.status_code}: {response.text[:300]}"
    body = response.json()
    share = min(1.0, gpus / jobs)
    got = sorted(job["allocation"].get("g", 0.0) for job in body["jobs"])
    if body["status"] != "optimal" or len(got) != jobs:
        return f"not the answer: {body['status']}, {len(got)} jobs"
    if any(abs(value - share) > 1e-6 for value in got):
        return f"shares {got}, expected {share} each"
    return None


def _client(service: Service, seed: int, until: float, seen: list[tuple[int, str | None]]) -> None:
    rng = random.Random(seed)
    with httpx.Client(base_url=service.base, timeout=60) as client:
        while time.monotonic() < until:
            gpus, jobs = rng.randint(1, 4), rng.randint(1, 6)
            try:
                response = client.post("/v1/solve", json={"snapshot": _snapshot(gpus, jobs)})
            except httpx.HTTPError as exc:
                seen.append((0, f"no answer: {exc!r}"))
                continue
            seen.append((response.status_code, _check(response, gpus, jobs)))


def _killer(service: Service, until: float, kills: list[int]) -> None:
    """Every 0.2 to 1 s, kill one solver process, or every one of them (then none is running
    for a while): each may be warm or still warming up, idle or running a request."""
    rng = random.Random(7)
    while time.monotonic() < until:
        time.sleep(rng.uniform(0.2, 1.0))
        solvers = service.solvers()
        victims = solvers if rng.random() < 0.4 else solvers[:1]
        for victim in victims:
            try:
                os.kill(victim, rng.choice((signal.SIGKILL, signal.SIGTERM)))
            except ProcessLookupError:
                continue
            kills.append(victim)


def test_a_worker_kill_chaos_run_answers_no_500(tmp_path: Path) -> None:
    log = tmp_path / "service.log"
    with (
        log.open("wb") as stderr,
        running_service(
            main=True,
            stderr=stderr,
            preexec_fn=no_core_dumps,
            workers="2",
            queue_size="16",
            retry_after_seconds="1",
        ) as service,
    ):
        until = time.monotonic() + CHAOS_SECONDS
        seen: list[tuple[int, str | None]] = []
        kills: list[int] = []
        threads = [
            threading.Thread(target=_client, args=(service, seed, until, seen))
            for seed in range(CLIENTS)
        ]
        threads.append(threading.Thread(target=_killer, args=(service, until, kills)))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=CHAOS_SECONDS + 120)
        problems = [f"{status}: {why}" for status, why in seen if why is not None]
        assert problems == [], (len(seen), problems[:5])
        assert len(kills) >= 5
        assert {status for status, _ in seen} <= {200, 503}
        assert any(status == 200 for status, _ in seen)
        # Healed: a request after the run is solved.
        deadline = time.monotonic() + 90
        while httpx.get(f"{service.base}/readyz", timeout=10).status_code != 200:
            assert time.monotonic() < deadline, "the service did not recover"
            time.sleep(0.1)
        after = httpx.post(f"{service.base}/v1/solve", json=PROBE, timeout=60)
        assert after.status_code == 200 and after.json()["status"] == "optimal"
    text = log.read_text(errors="replace")
    assert "Traceback" not in text and "Exception in ASGI application" not in text, text[-3000:]


def _read_answer(connection: Any) -> tuple[int, dict[str, str], bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = connection.recv(65536)
        assert chunk, f"the connection closed without an answer: {data!r}"
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    while len(rest) < int(headers.get("content-length", "0")):
        chunk = connection.recv(65536)
        if not chunk:
            break
        rest += chunk
    return int(lines[0].split()[1]), headers, rest


def test_sigterm_while_a_body_arrives_is_a_503_with_retry_after(tmp_path: Path) -> None:
    body = orjson.dumps({"snapshot": _snapshot(2, 3)})
    log = tmp_path / "service.log"
    with (
        log.open("wb") as stderr,
        running_service(main=True, stderr=stderr, workers="1") as service,
        open_request(service, "/v1/solve", body, send=10) as connection,
    ):
        time.sleep(0.5)  # admitted, its body being read
        service.process.send_signal(signal.SIGTERM)
        time.sleep(0.5)  # the pool drains
        connection.sendall(body[10:])
        status, headers, answer = _read_answer(connection)
        assert status == 503, answer
        assert headers["content-type"] == "application/problem+json"
        assert int(headers["retry-after"]) >= 1
        assert "shutting down" in orjson.loads(answer)["detail"]
        assert service.process.wait(timeout=60) in (0, -signal.SIGTERM)
    text = log.read_text(errors="replace")
    assert "Traceback" not in text, text[-3000:]
