"""The service under test as a whole process: start uvicorn on a free port, wait for /livez,
stop it (SIGTERM, then SIGKILL to its process group), and measure its memory as the resident
set size summed over the uvicorn process and all its descendants (its worker processes)."""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import ModuleType

import httpx

ROOT = Path(__file__).resolve().parents[1]
READY_TIMEOUT = 60.0  # the service may start worker processes before it answers
STOP_TIMEOUT = 15.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def service_env() -> dict[str, str]:
    """Bench's own environment, so APPORTION_* settings (workers, queue size, body limit...) reach
    the service when they are set; none is required."""
    return dict(os.environ)


def apportion_settings() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k.startswith("APPORTION_")}


class Service:
    """`python -m uvicorn apportion.api.main:app` in its own session (process group); its output goes to
    a temporary file (read back when it fails), closed by `stop`."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tempfile.TemporaryFile(prefix="apportion-bench-service-")  # noqa: SIM115
        self.command = [sys.executable, "-m", "uvicorn", "apportion.api.main:app"]
        self.command += ["--host", "127.0.0.1", "--port", str(self.port)]
        self.process = subprocess.Popen(
            self.command,
            cwd=ROOT,
            env=service_env(),
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.startup_seconds = 0.0

    @property
    def pid(self) -> int:
        return self.process.pid

    def exit_code(self) -> int | None:
        return self.process.poll()

    def log_tail(self, chars: int = 4000) -> str:
        self.log.seek(0, os.SEEK_END)
        size = self.log.tell()
        self.log.seek(max(0, size - chars))
        return self.log.read().decode(errors="replace").strip()

    def last_words(self) -> str:
        """The service's last exception line (`...Error: message`), else its last line."""
        lines = [line for line in self.log_tail().splitlines() if line.strip()]
        errors = [line for line in lines if re.match(r"[\w.]*(Error|Exception)\b", line)]
        return (errors or lines or ["(no output)"])[-1][:200]

    def wait_ready(self, timeout: float = READY_TIMEOUT) -> None:
        """Until GET /livez answers 200; raises with the service's last output otherwise."""
        started = time.perf_counter()
        deadline = started + timeout
        with httpx.Client(base_url=self.url, timeout=2.0) as client:
            while time.perf_counter() < deadline:
                if self.exit_code() is not None:
                    raise RuntimeError(f"service exited ({self.exit_code()}): {self.last_words()}")
                with contextlib.suppress(httpx.HTTPError):
                    if client.get("/livez").status_code == 200:
                        self.startup_seconds = time.perf_counter() - started
                        return
                time.sleep(0.1)
        raise RuntimeError(f"/livez did not answer within {timeout:g} s: {self.last_words()}")

    def stop(self) -> str:
        """SIGTERM the uvicorn process; after STOP_TIMEOUT, SIGKILL its whole process group (it
        was started in its own session, so the group is exactly the service). Says what it did."""
        how = "stopped by SIGTERM"
        if self.exit_code() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                how = f"killed (SIGTERM ignored for {STOP_TIMEOUT:g} s)"
        else:
            how = f"had already exited ({self.exit_code()})"
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)  # leftovers: worker processes, a hung parent
        self.process.wait()
        self.log.close()
        return how


def _psutil() -> ModuleType | None:
    try:
        return importlib.import_module("psutil")
    except ImportError:
        return None


def _proc_rss(pid: int) -> int:
    with contextlib.suppress(OSError, ValueError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def _children_map() -> dict[int, list[int]]:
    """Parent id -> child ids, from one scan of every /proc/<n>/stat."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                stat = (entry / "stat").read_text()
                parent = int(stat.rsplit(")", 1)[1].split()[1])
                children.setdefault(parent, []).append(int(entry.name))
    return children


def _proc_children(pid: int, scanned: dict[int, list[int]] | None) -> list[int]:
    """From /proc/<pid>/task/*/children when the kernel provides it, else from the scan."""
    if scanned is None:
        with contextlib.suppress(OSError, ValueError):
            files = list(Path(f"/proc/{pid}/task").glob("*/children"))
            return [int(c) for f in files for c in f.read_text().split()]
        return []
    return scanned.get(pid, [])


def _proc_tree(pid: int) -> list[int]:
    has_children_files = any(Path(f"/proc/{pid}/task").glob("*/children"))
    scanned = None if has_children_files else _children_map()
    pids, todo = [], [pid]
    while todo:
        current = todo.pop()
        pids.append(current)
        todo.extend(_proc_children(current, scanned))
    return pids


def tree_rss(pid: int) -> tuple[int, int]:
    """(bytes resident summed over the process and its descendants, number of processes)."""
    psutil = _psutil()
    if psutil is not None:
        try:
            root = psutil.Process(pid)
            procs = [root, *root.children(recursive=True)]
        except psutil.Error:
            return 0, 0
        total = 0
        for proc in procs:
            with contextlib.suppress(psutil.Error):
                total += int(proc.memory_info().rss)
        return total, len(procs)
    pids = _proc_tree(pid)
    return sum(_proc_rss(p) for p in pids), len(pids)


def _proc_cpu(pid: int) -> float:
    with contextlib.suppress(OSError, ValueError, IndexError):
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
    return 0.0


def tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) used so far by the process and its living descendants."""
    psutil = _psutil()
    if psutil is not None:
        total = 0.0
        with contextlib.suppress(psutil.Error):
            root = psutil.Process(pid)
            for proc in [root, *root.children(recursive=True)]:
                with contextlib.suppress(psutil.Error):
                    times = proc.cpu_times()
                    total += float(times.user + times.system)
        return total
    return sum(_proc_cpu(p) for p in _proc_tree(pid))


class RssSampler:
    """Peak of `tree_rss(pid)` sampled every `interval` seconds on a thread, while in use."""

    def __init__(self, pid: int, interval: float = 0.1) -> None:
        self.pid = pid
        self.interval = interval
        self.peak = 0
        self.processes = 0
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            rss, count = tree_rss(self.pid)
            if rss >= self.peak:
                self.peak, self.processes = rss, count
            self.samples += 1
            self._stop.wait(self.interval)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()
