"""The service benchmark's measurements turned into table rows (bench.harness.Row).

Load rows: `total s` is the p50 latency, validate / build / solve the medians of the solver's own
report in the answers, `vs baseline` req/s over the 1-client row's. Big rows: `total s` is the
/livez p99 (500,000 jobs) or the request's wall time (1,000,000 jobs). GB are 10⁹ bytes."""

from __future__ import annotations

import math
import os
import time
from collections import Counter
from typing import Any

from bench.harness import Case, Row
from bench.service_load import LivezPoller, LoadResult, Timed, percentile, run_load, timed_post
from bench.service_proc import RssSampler, Service, tree_cpu, tree_rss

WARMUP = 1.0  # seconds of load before the measured window, per client count
DURATION = 8.0
WARM_CLIENTS = 4  # before the first row: enough to reach every worker of a small service
WARM_SECONDS = 2.0
LIVEZ_P99 = 0.050
BIG_SECONDS = 15.0
BIG_BYTES = 3e9


def _yes(ok: bool) -> str:
    return "yes" if ok else "NO"


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f}"


def _gb(size: float) -> str:
    return f"{size / 1e9:.2f}"


def _backend(reports: list[dict[str, Any]]) -> str:
    named = Counter(f"{r.get('backend')}/{r.get('solver')}" for r in reports if r.get("backend"))
    return "http → " + named.most_common(1)[0][0] if named else "http"


def _status(reports: list[dict[str, Any]]) -> str:
    found = Counter(str(r.get("status")) for r in reports if r.get("status"))
    return found.most_common(1)[0][0] if found else "—"


def _objective(reports: list[dict[str, Any]]) -> float | None:
    values = [r["objective"] for r in reports if isinstance(r.get("objective"), int | float)]
    return float(values[-1]) if values else None


def error_row(case: Case, failure: str) -> Row:
    return Row(case, 0, 0, 0.0, 0.0, 0.0, math.nan, None, "error", "http", None, failure)


def _failures(result: LoadResult) -> str:
    text = f"errors {result.errors}, rejected (503) {result.rejected}"
    if result.other_statuses:
        text += " (" + ", ".join(f"{k}×{v}" for k, v in result.other_statuses.items()) + ")"
    return text


def _targets(high: LoadResult, mid: LoadResult) -> str:
    p50, p99 = percentile(high.latencies, 0.5), percentile(high.latencies, 0.99)
    share = high.rate / mid.rate if mid.rate > 0 else math.nan
    spread = p99 / p50 if p50 > 0 else math.nan
    return (
        f"targets: no errors {_yes(high.errors == 0 and bool(high.latencies))}, "
        f"no 503s {_yes(high.rejected == 0)}; "
        f"req/s ≥ 90 % of {mid.clients} clients' ({share:.0%}) {_yes(share >= 0.9)}; "
        f"p99 ≤ 3×p50 ({spread:.1f}×) {_yes(spread <= 3.0)}"
    )


def _load_row(case: Case, result: LoadResult, base_rate: float, shape: tuple[int, int]) -> Row:
    lat = result.latencies
    p50, p95, p99 = (percentile(lat, q) for q in (0.5, 0.95, 0.99))
    note = (
        f"{result.rate:.1f} req/s ({len(lat)} × 200 in {result.seconds:.1f} s); "
        f"p50 {_ms(p50)} / p95 {_ms(p95)} / p99 {_ms(p99)} ms; {_failures(result)}"
    )
    return Row(
        case=case,
        jobs=shape[0],
        types=shape[1],
        validate=result.median("validate_seconds"),
        build=result.median("build_seconds"),
        solve=result.median("solve_seconds"),
        total=p50,
        objective=_objective(result.reports),
        status=_status(result.reports),
        backend=_backend(result.reports),
        ratio=result.rate / base_rate if base_rate > 0 else None,
        note=note,
    )


def warm_service(url: str, body: bytes) -> str:
    """Untimed: one request (the first may wait for the worker processes to start), then
    WARM_CLIENTS clients for WARM_SECONDS so every worker has solved before any timing."""
    first = timed_post(url, body, timeout=120.0)
    run_load(url, body, WARM_CLIENTS, 0.0, WARM_SECONDS)
    return f"first request after start: {first.status} in {first.seconds:.2f} s (untimed)"


def _measured_load(service: Service, body: bytes, clients: int) -> tuple[LoadResult, str]:
    """The load, with the CPU the service's processes and bench's own clients used meanwhile."""
    began, service_cpu, own_cpu = time.perf_counter(), tree_cpu(service.pid), time.process_time()
    result = run_load(service.url, body, clients, WARMUP, DURATION)
    wall = time.perf_counter() - began
    usage = (
        f"CPU cores busy: service {(tree_cpu(service.pid) - service_cpu) / wall:.2f}, "
        f"bench's clients {(time.process_time() - own_cpu) / wall:.2f} (of {os.cpu_count()})"
    )
    return result, usage


def load_rows(
    cases: list[Case],
    service: Service,
    body: bytes,
    clients: tuple[int, ...],
    shape: tuple[int, int],
) -> list[Row]:
    """One row per client count after a warm-up; the last row also carries the targets, against
    the second."""
    warm = warm_service(service.url, body)
    measured = [_measured_load(service, body, n) for n in clients]
    results = [result for result, _ in measured]
    rows = [
        _load_row(case, result, results[0].rate, shape)
        for case, result in zip(cases, results, strict=True)
    ]
    for row, (_, usage) in zip(rows, measured, strict=True):
        row.note += "; " + usage
    rows[0].note += "; " + warm
    rows[-1].note += "; " + _targets(results[-1], results[1])
    return rows


def _timed_row(case: Case, timed: Timed, total: float, shape: tuple[int, int], note: str) -> Row:
    report = timed.report
    return Row(
        case=case,
        jobs=shape[0],
        types=shape[1],
        validate=float(report.get("validate_seconds") or 0.0),
        build=float(report.get("build_seconds") or 0.0),
        solve=float(report.get("solve_seconds") or 0.0),
        total=total,
        objective=_objective([report]),
        status=f"HTTP {timed.status} {report.get('status') or ''}".strip(),
        backend=_backend([report]),
        ratio=None,
        note=note,
    )


def _outcome(timed: Timed, body: bytes) -> str:
    text = f"{timed.status} in {timed.seconds:.2f} s ({len(body) / 1e6:.0f} MB body)"
    return text + (f" «{timed.detail}»" if timed.detail else "")


def _alive(service: Service) -> None:
    if service.exit_code() is not None:
        raise RuntimeError(f"service exited ({service.exit_code()}): {service.last_words()}")


def _death(service: Service) -> str:
    """A note when the service died while answering (e.g. killed for memory)."""
    if service.exit_code() is None:
        return ""
    return f"; the service EXITED ({service.exit_code()}): {service.last_words()}"


def livez_row(case: Case, service: Service, body: bytes, shape: tuple[int, int]) -> Row:
    """/livez polled every 20 ms while one big request is in flight."""
    _alive(service)
    with RssSampler(service.pid) as rss, LivezPoller(service.url) as poller:
        timed = timed_post(service.url, body)
    lat = poller.latencies
    p50, p99 = percentile(lat, 0.5), percentile(lat, 0.99)
    note = (
        f"/livez p50 {_ms(p50)} / p99 {_ms(p99)} / max {_ms(max(lat, default=math.nan))} ms "
        f"over {len(lat)} polls ({poller.failures} failed); the request: {_outcome(timed, body)}; "
        f"service peak RSS {_gb(rss.peak)} GB; target p99 ≤ {LIVEZ_P99 * 1e3:g} ms: "
    )
    if timed.status == "200":
        note += _yes(p99 <= LIVEZ_P99) + _death(service)
        return _timed_row(case, timed, p99, shape, note)
    note += f"NO (not assessed: the request was not answered){_death(service)}"
    return _timed_row(case, timed, math.nan, shape, note)


def big_row(case: Case, service: Service, body: bytes, shape: tuple[int, int]) -> Row:
    """One big request end to end, with the service's peak memory (process tree, 100 ms)."""
    _alive(service)
    idle, _ = tree_rss(service.pid)
    with RssSampler(service.pid) as rss:
        timed = timed_post(service.url, body)
    answered = timed.status == "200"
    unanswered = "" if answered else " (not answered)"
    note = (
        f"{_outcome(timed, body)}; service peak RSS {_gb(rss.peak)} GB over {rss.processes} "
        f"process(es) (idle before: {_gb(idle)} GB; {rss.samples} samples); "
        f"targets: ≤ {BIG_SECONDS:g} s {_yes(answered and timed.seconds <= BIG_SECONDS)}"
        f"{unanswered}; ≤ {_gb(BIG_BYTES)} GB {_yes(answered and rss.peak <= BIG_BYTES)}"
        f"{unanswered}{_death(service)}"
    )
    return _timed_row(case, timed, timed.seconds, shape, note)
