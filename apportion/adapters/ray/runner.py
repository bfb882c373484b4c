"""What holds a job's placement group on Ray: one actor per job, in its group's first bundle,
running the job's entrypoint as a subprocess.

The actor asks for the bundle's GPUs (so Ray sets `CUDA_VISIBLE_DEVICES` for it and the
entrypoint inherits it) and no CPU. The entrypoint runs with `APPORTION_*` variables saying
where the round placed it, in the actor's process group, which Ray ends with the actor's
worker: should the actor die without stopping it (its group removed by someone else), nothing
the job started outlives the GPUs Ray gave it; should the worker be killed outright, the
kernel kills the entrypoint's shell (`PR_SET_PDEATHSIG`).

Stopping (`terminate`) is the job's checkpoint contract: SIGTERM to the entrypoint and every
process it started, `grace` seconds to save its state and exit, then SIGKILL.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from contextlib import suppress

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In the child, before exec: killed when the actor's process ends (Linux only)."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


class JobRunner:
    """The actor's class (made a Ray actor by `raycluster`, so this module needs no Ray)."""

    def __init__(self, entrypoint: str, cwd: str | None, env: Mapping[str, str]) -> None:
        where = cwd if cwd and os.path.isdir(cwd) else None
        self.process = subprocess.Popen(
            ["/bin/sh", "-c", entrypoint],
            cwd=where,
            env={**os.environ, **env},
            preexec_fn=_die_with_parent,
        )

    def poll(self) -> int | None:
        """The entrypoint's exit code, or None while it runs."""
        return self.process.poll()

    def pid(self) -> int:
        return self.process.pid

    def terminate(self, grace: float) -> int:
        """SIGTERM to the entrypoint and its processes, SIGKILL after `grace` seconds; its exit
        code."""
        if self.process.poll() is None:
            self._signal(signal.SIGTERM)
            try:
                return self.process.wait(grace)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL)
        return self.process.wait()

    def _signal(self, number: int) -> None:
        """`number` to the entrypoint and every process it started (they share the worker's
        process group, which Ray ends with the worker, so they are signalled one by one)."""
        import psutil  # a dependency of Ray's

        try:
            tree = [psutil.Process(self.process.pid)]
            tree += tree[0].children(recursive=True)
        except psutil.NoSuchProcess:  # exited in between
            return
        for process in tree:
            with suppress(psutil.NoSuchProcess):
                process.send_signal(number)
