"""HTTP clients for the service benchmark: closed-loop load from N concurrent clients (one thread
and one keep-alive connection each), a /livez poller, and one timed request."""

from __future__ import annotations

import math
import multiprocessing
import statistics
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson

JSON = {"content-type": "application/json"}
BIG_TIMEOUT = 300.0
RETRY_AFTER_CAP = 1.0  # a rejected client waits as told (at most this long) before trying again


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in [0, 1]); NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def solver_report(content: bytes) -> dict[str, Any]:
    """The result's `solver` report plus its status and objective ({} if the body is not one)."""
    try:
        body = orjson.loads(content)
    except orjson.JSONDecodeError:
        return {}
    if not isinstance(body, dict) or not isinstance(body.get("solver"), dict):
        return {}
    return {**body["solver"], "status": body.get("status"), "objective": body.get("objective")}


@dataclass
class LoadResult:
    clients: int
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)  # 200s only
    reports: list[dict[str, Any]] = field(default_factory=list)
    errors: int = 0  # transport errors and any status other than 200 and 503
    rejected: int = 0  # 503
    other_statuses: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def rate(self) -> float:
        return len(self.latencies) / self.seconds if self.seconds > 0 else 0.0

    def median(self, key: str) -> float:
        values = [r[key] for r in self.reports if isinstance(r.get(key), int | float)]
        return statistics.median(values) if values else 0.0


def _retry_after(response: httpx.Response) -> float:
    try:
        return min(RETRY_AFTER_CAP, max(0.0, float(response.headers.get("retry-after", "0"))))
    except ValueError:
        return RETRY_AFTER_CAP


def _record(result: LoadResult, response: httpx.Response, took: float) -> None:
    with result.lock:
        if response.status_code == 200:
            result.latencies.append(took)
            result.reports.append(solver_report(response.content))
        elif response.status_code == 503:
            result.rejected += 1
        else:
            result.errors += 1
            key = str(response.status_code)
            result.other_statuses[key] = result.other_statuses.get(key, 0) + 1


def _client_loop(
    url: str, body: bytes, start: float, measure_from: float, until: float, out: LoadResult
) -> None:
    """One client: post back to back until `until`; record the requests started after warm-up."""
    with httpx.Client(base_url=url, timeout=BIG_TIMEOUT) as client:
        time.sleep(max(0.0, start - time.perf_counter()))
        while (began := time.perf_counter()) < until:
            try:
                response = client.post("/v1/solve", content=body, headers=JSON)
            except httpx.HTTPError as exc:
                if began >= measure_from:
                    with out.lock:
                        out.errors += 1
                        key = type(exc).__name__
                        out.other_statuses[key] = out.other_statuses.get(key, 0) + 1
                time.sleep(0.05)  # no busy loop against a service that is down
                continue
            if began >= measure_from:
                _record(out, response, time.perf_counter() - began)
            if response.status_code == 503:
                time.sleep(_retry_after(response))


def run_load(url: str, body: bytes, clients: int, warmup: float, duration: float) -> LoadResult:
    """`clients` closed-loop clients for `warmup` + `duration` seconds; req/s counts the 200s of
    requests started in the measured window over the time until the last of them finished."""
    out = LoadResult(clients)
    start = time.perf_counter() + 0.2  # every thread has its connection object before the start
    measure_from = start + warmup
    until = measure_from + duration
    threads = [
        threading.Thread(target=_client_loop, args=(url, body, start, measure_from, until, out))
        for _ in range(clients)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    out.seconds = time.perf_counter() - measure_from
    return out


@dataclass
class Timed:
    """One request: its status ("200", "413", "ReadTimeout", ...), wall time and solver report."""

    status: str
    seconds: float
    report: dict[str, Any]
    detail: str = ""


def _problem_detail(response: httpx.Response) -> str:
    """A problem document's `detail` (RFC 9457), else the start of the body."""
    try:
        body = orjson.loads(response.content)
    except orjson.JSONDecodeError:
        body = None
    detail = body.get("detail") if isinstance(body, dict) else None
    return (detail if isinstance(detail, str) else response.text)[:160]


def timed_post(url: str, body: bytes, timeout: float = BIG_TIMEOUT) -> Timed:
    began = time.perf_counter()
    try:
        with httpx.Client(base_url=url, timeout=timeout) as client:
            response = client.post("/v1/solve", content=body, headers=JSON)
    except httpx.HTTPError as exc:
        return Timed(type(exc).__name__, time.perf_counter() - began, {}, str(exc)[:120])
    took = time.perf_counter() - began
    report = solver_report(response.content) if response.status_code == 200 else {}
    detail = "" if response.status_code == 200 else _problem_detail(response)
    return Timed(str(response.status_code), took, report, detail)


class LivezPoller:
    """GET /livez every `interval` seconds (from the start of one poll to the next) from a
    separate process (a thread would share the interpreter lock with the big request's client,
    which parses a 100 MB answer, and measure the client's stalls, not the server's);
    `latencies` of the answered polls, `failures` of the others."""

    def __init__(self, url: str, interval: float = 0.02, timeout: float = BIG_TIMEOUT) -> None:
        self.url = url
        self.interval = interval
        self.timeout = timeout
        self.latencies: list[float] = []
        self.failures = 0
        context = multiprocessing.get_context("spawn")
        self._stop = context.Event()
        self._results, sender = context.Pipe(duplex=False)
        self._process = context.Process(
            target=_poll, args=(url, interval, timeout, self._stop, sender), daemon=True
        )

    def __enter__(self) -> LivezPoller:
        self._process.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        if self._results.poll(self.timeout):
            self.latencies, self.failures = self._results.recv()
        self._process.join(self.timeout)


def _poll(url: str, interval: float, timeout: float, stop: Any, results: Any) -> None:
    latencies: list[float] = []
    failures = 0
    with httpx.Client(base_url=url, timeout=timeout) as client:
        while not stop.is_set():
            began = time.perf_counter()
            try:
                ok = client.get("/livez").status_code == 200
            except httpx.HTTPError:
                ok = False
            took = time.perf_counter() - began
            if ok:
                latencies.append(took)
            else:
                failures += 1
            stop.wait(max(0.0, interval - took))
    results.send((latencies, failures))
