"""One adapter per cluster and scope: an exclusive lock taken before the first round.

Two adapters on the same jobs undo each other every round (one starts a job on a node, the
other moves it elsewhere in the same second). Each instance therefore holds, for as long as it
runs, an `flock` on

- `<state>.lock`, next to its state file (two instances sharing a state file), and
- when the integration names what it manages (`Identified`), a lock file named after that
  identity (scheduler, cluster, scope) in a shared directory (two instances on the same
  cluster and scope, with different state files).

The kernel drops a lock when its holder ends, however it ends (kill -9 included), so a lock
never outlives its adapter; a second instance is refused with one line naming the file and
the holder's pid and host, which each holder writes into its lock file.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import socket
import tempfile
import time
from collections.abc import Iterable
from contextlib import suppress
from pathlib import Path

from apportion.adapters.framework.integration import SetupError


class LockError(SetupError):
    """Another instance holds a lock this one needs; one line naming it."""


def lock_dir() -> Path:
    """The shared directory of identity locks: `$APPORTION_LOCK_DIR`, else the system's
    temporary directory."""
    return Path(os.environ.get("APPORTION_LOCK_DIR") or tempfile.gettempdir())


def identity_lock(identity: str, directory: Path | None = None) -> Path:
    """The lock file of one cluster and scope (`identity`, one line)."""
    digest = hashlib.sha256(identity.encode()).hexdigest()[:16]
    return (directory or lock_dir()) / f"apportion-{digest}.lock"


def claim(state: Path, identity: str | None, directory: Path | None = None) -> InstanceLock:
    """The held locks of an adapter with this state file and (when it has one) identity;
    `LockError` when another instance holds one."""
    paths = [state.with_name(f"{state.name}.lock")]
    if identity is not None:
        paths.append(identity_lock(identity, directory))
    lock = InstanceLock(paths, identity or "")
    lock.acquire()
    return lock


class InstanceLock:
    """Exclusive locks on `paths`, held from `acquire` until `release` (or the process ends)."""

    def __init__(self, paths: Iterable[Path], identity: str = "") -> None:
        self.paths = list(dict.fromkeys(paths))
        self.identity = identity
        self._held: list[int] = []

    def acquire(self) -> None:
        """Take every lock, or none: `LockError` naming the first one held by another."""
        try:
            for path in self.paths:
                self._held.append(_take(path, self.identity))
        except BaseException:
            self.release()
            raise

    def release(self) -> None:
        for fd in self._held:
            os.close(fd)  # closing the descriptor drops its flock
        self._held.clear()

    @property
    def held(self) -> bool:
        return bool(self._held)


def _take(path: Path, identity: str) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as exc:
        raise LockError(f"cannot open the lock file {path}: {exc.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _holder(fd)
        os.close(fd)
        raise LockError(
            f"another instance manages the same jobs: {path} is held by {holder}; "
            "one adapter per cluster and scope"
        ) from None
    with suppress(PermissionError):  # a file another user made is theirs to open to all
        os.fchmod(fd, 0o666)  # the next instance may run as another user
    record = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.time()}
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps({**record, "manages": identity}).encode() + b"\n", 0)
    return fd


def _holder(fd: int) -> str:
    """`pid 1234 on host h (manages ...)` from a held lock file, as well as it can be read."""
    try:
        record = json.loads(os.pread(fd, 4096, 0) or b"{}")
        text = f"pid {int(record['pid'])} on host {record['host']}"
    except (ValueError, KeyError, TypeError):
        return "an instance whose pid is not recorded yet"
    manages = record.get("manages")
    return f"{text} (managing {manages})" if manages else text
