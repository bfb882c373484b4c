"""The service as a user starts it: uvicorn in a subprocess on 127.0.0.1, with its settings in
APPORTION_* variables; and what the tests read back from its processes (/proc)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

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


@contextmanager
def running_service(**settings: str) -> Iterator[Service]:
    port = free_port()
    env = {**os.environ, **{f"APPORTION_{k.upper()}": v for k, v in settings.items()}}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "apportion.api.main:app",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    service = Service(f"http://127.0.0.1:{port}", process)
    try:
        wait_until_ready(service)
        yield service
    finally:
        stop(process)


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
