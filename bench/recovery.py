"""The service healing itself, measured from outside on `python -m uvicorn apportion.api.main:app`:

- a solver process killed while idle (SIGKILL, as the kernel's OOM killer does): seconds from
  the kill until /readyz answers 200 again (the replacement started and warm), over `KILLS`
  kills; /readyz must have been seen not ready in between;
- an idle solver process's resident memory after one 500,000-job max-min request (target
  ≤ 150 MB): as deployed (freed heap given back after a large request; a process still above
  `worker_max_rss_bytes` is replaced), and, for comparison, replacing the process after every
  request (`worker_max_rss_bytes=0`: what a one-task-per-child pool does), whose cost is a
  warm-up per request (what the first row measures).

Each row starts its own service; `total s` is the median recovery time, or the request's wall
time for the memory rows. MB are 10⁶ bytes."""

from __future__ import annotations

import math
import os
import signal
import statistics
import time
from pathlib import Path

import httpx

from bench.harness import Case, Row
from bench.service import synthetic_body
from bench.service_load import timed_post
from bench.service_proc import Service, descendants

GROUP = "recovery"
KILLS = 5
WORKERS = 2
BIG_JOBS = 500_000
RSS_TARGET = 150e6
KILL_NAME = f"idle solver process killed (SIGKILL) → /readyz ready again, {WORKERS} workers"
RSS_NAME = f"idle solver process's RSS after one {BIG_JOBS:,}-job max-min request"
RECYCLE_NAME = RSS_NAME + ", process replaced after every request"


def cases() -> list[Case]:
    return [
        Case(GROUP, KILL_NAME, dict, "max_min_fairness", runner=kill_row),
        Case(GROUP, RSS_NAME, dict, "max_min_fairness", runner=rss_row),
        Case(GROUP, RECYCLE_NAME, dict, "max_min_fairness", runner=rss_row),
    ]


def solvers(service: Service) -> list[int]:
    """The service's solver processes (not the resource tracker, not what they start)."""
    found = []
    for pid in descendants(service.pid):
        try:
            if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
        except OSError:
            continue
    return found


def resident(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError):
        return 0


def until_ready(client: httpx.Client, seconds: float = 120) -> float:
    """Seconds until /readyz answers 200, polled every 5 ms."""
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        if client.get("/readyz").status_code == 200:
            return time.perf_counter() - started
        time.sleep(0.005)
    raise RuntimeError(f"/readyz not ready again within {seconds:g} s")


def until_not_ready(client: httpx.Client, seconds: float = 10) -> bool:
    """Whether /readyz answers 503 within `seconds` (the service noticed the death)."""
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        if client.get("/readyz").status_code == 503:
            return True
        time.sleep(0.005)
    return False


def _row(case: Case, total: float, jobs: int, status: str, note: str) -> Row:
    return Row(case, jobs, 0, 0.0, 0.0, 0.0, total, None, status, "http", None, note)


def kill_row(case: Case) -> Row:
    service = Service({"workers": str(WORKERS)})
    try:
        service.wait_ready()
        with httpx.Client(base_url=service.url, timeout=10) as client:
            until_ready(client)
            times, flips = [], 0
            for _ in range(KILLS):
                killed = time.perf_counter()
                os.kill(solvers(service)[0], signal.SIGKILL)
                flips += until_not_ready(client)
                until_ready(client)
                times.append(time.perf_counter() - killed)
            answered = client.post("/v1/solve", json=_PROBE).status_code
    finally:
        stopped = service.stop()
    spread = ", ".join(f"{t:.2f}" for t in times)
    note = (
        f"{KILLS} kills: {spread} s (min {min(times):.2f}, max {max(times):.2f}); /readyz "
        f"seen not ready after {flips} of {KILLS}; a request after the last: {answered}; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; service {stopped}"
    )
    return _row(case, statistics.median(times), 0, "recovered", note)


def rss_row(case: Case) -> Row:
    recycle = case.name == RECYCLE_NAME
    settings = {"workers": "1", **({"worker_max_rss_bytes": "0"} if recycle else {})}
    body, _ = synthetic_body(BIG_JOBS)
    service = Service(settings)
    try:
        service.wait_ready()
        with httpx.Client(base_url=service.url, timeout=10) as client:
            until_ready(client)
            (before,) = solvers(service)
            idle = resident(before)
            timed = timed_post(service.url, body)
            until_ready(client)
            (after,) = solvers(service)
            rss = resident(after)
    finally:
        stopped = service.stop()
    how = "a fresh process" if after != before else "the same process"
    ok = "yes" if rss <= RSS_TARGET else "NO"
    note = (
        f"HTTP {timed.status} in {timed.seconds:.2f} s ({len(body) / 1e6:.0f} MB body); "
        f"idle RSS {rss / 1e6:.0f} MB after ({how}; {idle / 1e6:.0f} MB warm before); "
        f"target ≤ {RSS_TARGET / 1e6:.0f} MB: {ok}; service {stopped}"
    )
    total = timed.seconds if timed.status == "200" else math.nan
    return _row(case, total, BIG_JOBS, f"HTTP {timed.status}", note)


_PROBE = {
    "snapshot": {
        "gpu_types": [{"name": "g", "count": 1}],
        "jobs": [{"id": "j", "throughput": {"g": 1}}],
    }
}
