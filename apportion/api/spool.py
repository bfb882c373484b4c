"""Where bodies too large to pass around in memory wait, and how many body bytes the service
holds at once.

- One folder per service process (`apportion-<pid>-…` in the spool location) holds the request
  bodies being received or solved and the answers being sent; each solver process writes its
  large answers into a folder of its own inside it, handed over by a rename once the answer is
  complete (so a worker that dies mid-write leaves nothing the server would send). The whole
  folder is removed at shutdown; folders of a service that was killed (here and the solver
  processes' temporary folders, `apportion-<pid>-tmp-…`) are removed at the next start.
- The budget counts the bytes of every request body the service holds (being received,
  waiting for a worker or being solved), kept in memory or spooled alike: a request that would
  go beyond it is refused, before its body is read when it declares its length, else as its
  chunks arrive.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
import threading
from pathlib import Path

FOLDER = "apportion-{pid}-"
_OURS = re.compile(r"apportion-(\d+)-")


def default_location(budget: int) -> Path:
    """Memory-backed files (/dev/shm) where the system has room there for the whole budget,
    else the temp folder (a container's /dev/shm is often 64 MB)."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK) and shutil.disk_usage(shm).total >= budget:
        return shm
    return Path(tempfile.gettempdir())


class Spool:
    """This service's folder in `location` and the body-byte budget (shared by the threads of
    the event loops that serve requests, hence the lock)."""

    def __init__(self, location: Path, budget: int) -> None:
        location.mkdir(parents=True, exist_ok=True)
        for folder in {location, Path(tempfile.gettempdir())}:  # spool, workers' temporary files
            sweep(folder)
        self.location = location
        self.dir = Path(tempfile.mkdtemp(prefix=FOLDER.format(pid=os.getpid()), dir=location))
        self.budget = budget
        self.held = 0
        self._lock = threading.Lock()

    def hold(self, size: int) -> bool:
        """Count `size` more body bytes, unless that goes beyond the budget."""
        with self._lock:
            if self.held + size > self.budget:
                return False
            self.held += size
            return True

    def release(self, size: int) -> None:
        with self._lock:
            self.held -= size

    def has_room(self, size: int) -> bool:
        """Whether the file system holding the spool has `size` bytes free now."""
        try:
            return shutil.disk_usage(self.dir).free >= size
        except OSError:
            return False

    def worker_folder(self) -> Path:
        self.dir.mkdir(parents=True, exist_ok=True)  # should someone have removed it
        return Path(tempfile.mkdtemp(prefix="worker-", dir=self.dir))

    def adopt(self, path: str) -> str:
        """Take over an answer file a worker finished writing (a rename, same file system)."""
        adopted = self.dir / Path(path).name
        os.replace(path, adopted)
        return str(adopted)

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


def sweep(location: Path) -> None:
    """Remove the folders of services that are gone (killed before their own cleanup)."""
    for folder in location.glob("apportion-*-*"):
        found = _OURS.match(folder.name)
        if found is None or not folder.is_dir() or _running(int(found[1])):
            continue
        shutil.rmtree(folder, ignore_errors=True)


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: not ours to judge
    return True


def empty(folder: Path) -> None:
    """Remove what is in `folder` (a worker's temporary files after each request)."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
