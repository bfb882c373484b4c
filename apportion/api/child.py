"""What a solver process runs, start to end: it leads a process group of its own (so the
supervisor can end it together with anything it started, such as PuLP's CBC), keeps temporary
files in a folder of its own, warms up, says so, then runs one request at a time.

Messages to the supervisor: ("ready",) once warm; ("took",) as it takes a request; ("answer",
answer, rss) when done, with its resident memory after giving back what it could.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import importlib
import os
import signal
import tempfile
from collections.abc import Callable
from dataclasses import replace
from functools import cache
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from apportion.api.problems import MEDIA_TYPE, problem_body
from apportion.api.spool import empty
from apportion.api.worker import Limits, RenderedResponse, warm_up

#: An endpoint's work (`api.worker.Endpoint`), as a worker calls it.
Task = Callable[[bytes | str, Limits], RenderedResponse]
_PR_SET_PDEATHSIG = 1
#: Above this much resident memory after a request, hand freed heap pages back to the system
#: (small requests leave less, and trimming after each would cost them time: the pages come back).
TRIM_ABOVE = 96 * 2**20


def serve(
    conn: Connection, limits: Limits, temporary: str, answers: str, preload: tuple[str, ...]
) -> None:
    """The process's whole life; it ends when the supervisor closes the pipe or ends it.
    `preload`: the modules the endpoints' work comes from (imported now, not on a request)."""
    os.setpgid(0, 0)
    _die_with_parent()
    os.environ["TMPDIR"] = temporary  # PuLP and CBC write their model and solution files here
    tempfile.tempdir = temporary
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    limits = replace(limits, answers=answers)
    for module in preload:
        importlib.import_module(module)
    warm_up()
    conn.send(("ready",))
    while True:
        try:
            task, body = conn.recv()
        except (EOFError, OSError):
            return
        conn.send(("took",))
        answer = _run(task, body, limits)
        empty(Path(temporary))
        conn.send(("answer", answer, _give_back()))


def _run(task: Task, body: bytes | str, limits: Limits) -> RenderedResponse:
    try:
        return task(body, limits)
    except Exception as exc:  # a defect in the worker: answer it, keep serving
        detail = f"internal error in the solver process: {type(exc).__name__}"
        return RenderedResponse(500, problem_body(500, detail), MEDIA_TYPE, {"status": "error"})


def resident_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _give_back() -> int:
    """Resident bytes now, after returning freed heap to the system when there is much of it
    (glibc keeps freed memory for reuse: 180 MB stayed resident after a 500,000-job solve)."""
    rss = resident_bytes()
    trim = _malloc_trim()
    if rss > TRIM_ABOVE and trim is not None:
        trim(0)
        rss = resident_bytes()
    return rss


@cache
def _libc() -> Any:
    name = ctypes.util.find_library("c")
    return None if name is None else ctypes.CDLL(name, use_errno=True)


def _malloc_trim() -> Callable[[int], int] | None:
    libc = _libc()
    return getattr(libc, "malloc_trim", None) if libc is not None else None


def _die_with_parent() -> None:
    """Linux ends this process when the thread that started it (the supervisor) ends, also
    when the service is killed without its own cleanup."""
    libc = _libc()
    with contextlib.suppress(AttributeError, OSError):
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() == 1:  # the parent was already gone
        os._exit(1)
