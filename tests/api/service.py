"""The service as a user starts it: uvicorn in a subprocess on 127.0.0.1, with its settings in
APPORTION_* variables; and what the tests read back from its processes (/proc)."""

from __future__ import annotations

import os
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import IO, Any

import httpx
import orjson

from apportion.refdata import SOURCE
from apportion.refdata.deepshare import read_contention_csv, read_trace, trace_snapshot

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Service:
    base: str
    process: subprocess.Popen[bytes]

    def workers(self) -> list[int]:
        """PIDs of the solver processes (the server's descendants)."""
        return descendants(self.process.pid)

    def solvers(self) -> list[int]:
        """PIDs of the solver processes alone (not the resource tracker, not what they start)."""
        return [pid for pid in self.workers() if "spawn_main" in command_line(pid)]


@contextmanager
def running_service(
    *,
    main: bool = False,
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    preexec_fn: Callable[[], None] | None = None,
    stderr: IO[bytes] | int = subprocess.DEVNULL,
    **settings: str,
) -> Iterator[Service]:
    """The service (`python -m uvicorn apportion.api.main:app` and `args`, or with `main` as the
    README runs it: `python -m apportion.api`), its settings in APPORTION_* variables, on a free
    port; ready (every worker warm) when it is yielded."""
    port = free_port()
    environment = {**os.environ, **(env or {})}
    settings = {**settings, "host": "127.0.0.1", "port": str(port)}
    environment |= {f"APPORTION_{k.upper()}": v for k, v in settings.items()}
    command = [sys.executable, "-m", "apportion.api"]
    if not main:
        command = [sys.executable, "-m", "uvicorn", "apportion.api.main:app"]
        command += ["--host", "127.0.0.1", "--port", str(port), *args]
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
        preexec_fn=preexec_fn,  # limits set on the service alone, before exec
    )
    service = Service(f"http://127.0.0.1:{port}", process)
    try:
        wait_until_ready(service)
        yield service
    finally:
        stop(process)


def no_core_dumps() -> None:
    """For `preexec_fn`: a solver process a test ends with a fault (SIGSEGV) writes no core
    file (the limit is inherited by the service's processes)."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def wait_until_ready(service: Service, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{service.base}/readyz", timeout=2).status_code == 200:
                # The pool starts its processes on first use: make them exist now.
                httpx.post(f"{service.base}/v1/solve", json=PROBE, timeout=60)
                if len(service.workers()) >= 1:
                    return
        except httpx.TransportError:
            time.sleep(0.2)
    raise RuntimeError("the service did not start in time")


def stop(process: subprocess.Popen[bytes], seconds: float = 20) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            for pid in descendants(process.pid):
                os.kill(pid, signal.SIGKILL)
            process.kill()
            process.wait()


def descendants(pid: int) -> list[int]:
    out: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            children = (
                (task / "children").read_text().split() if (task / "children").exists() else []
            )
            for child in map(int, children):
                out.append(child)
                todo.append(child)
    return out


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie waiting to be reaped does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def resident_bytes(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError):
        return 0


def processes_mentioning(text: str) -> list[int]:
    """Every process on the machine whose command line contains `text` (a folder only one
    test uses: what a solver process started and left behind, wherever it was re-parented)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and text in command_line(int(entry.name)):
            found.append(int(entry.name))
    return found


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of the given processes (those still alive)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


PROBE = {
    "snapshot": {
        "gpu_types": [{"name": "g", "count": 1}],
        "jobs": [{"id": "j", "throughput": {"g": 1}}],
    }
}


@cache
def long_placement() -> bytes:
    """A contention placement on 64 × 8 nodes with 100 candidates: it keeps a solver busy for
    as long as its time limit allows (measured: nothing proves it within a minute)."""
    trace = read_trace(SOURCE / "deepshare_trace0.json")
    snapshot = trace_snapshot(trace, nodes=64, running=70, candidates=100, seed=0)
    snapshot["contention"] = read_contention_csv(
        SOURCE / "deepshare_shared_thp_ratio.csv"
    ).model_dump()
    body = {
        "policy": "contention_placement",
        "snapshot": snapshot,
        "options": {"objective": "linear", "time_limit": 30},
    }
    return orjson.dumps(body)


def post_in_background(service: Service, body: bytes, timeout: float) -> dict[str, Any]:
    """Start a request in a thread; the dict gets its response (or error) when it ends."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["response"] = httpx.post(
                f"{service.base}/v1/solve",
                content=body,
                headers={"content-type": "application/json"},
                timeout=timeout,
            )
        except httpx.HTTPError as exc:
            out["error"] = exc

    out["thread"] = threading.Thread(target=run, daemon=True)
    out["thread"].start()
    return out


def busy_worker(service: Service, seconds: float = 60) -> int:
    """The solver process that is burning CPU (the one that used the most over half a second,
    at least a little: on a loaded machine a busy process may get a fraction of a core)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        before = {pid: cpu_seconds([pid]) for pid in service.solvers()}
        time.sleep(0.5)
        used = {pid: cpu_seconds([pid]) - cpu for pid, cpu in before.items()}
        busiest = max(used, key=lambda pid: used[pid], default=None)
        if busiest is not None and used[busiest] >= 0.05:
            return busiest
    raise AssertionError("no solver process got busy")


@contextmanager
def open_request(
    service: Service, path: str, body: bytes, *, send: int | None = None, length: int | None = None
) -> Iterator[socket.socket]:
    """A POST over a raw connection: `send` bytes of `body` (all by default) with a declared
    `length` (the body's by default); the client leaves (closes) when the block ends."""
    host, port = service.base.removeprefix("http://").split(":")
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body) if length is None else length}\r\n\r\n"
    )
    with socket.create_connection((host, int(port)), timeout=60) as connection:
        connection.sendall(head.encode() + body[:send])
        yield connection
