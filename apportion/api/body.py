"""Request and response bodies between the web server and the solver processes.

A body is read within the service's limits: a size (413) and a time (408). Small bodies travel
to a worker in memory; a body above `SPOOL_BYTES` is written to a file as it arrives and the
worker reads it from there, and a large answer comes back the same way. Handing a 100 MB
string through the pool's pipe would copy it while holding the interpreter lock, stalling the
event loop (and with it /livez) for a tenth of a second at a time.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from fastapi import Request

from apportion.api.problems import ProblemError

SPOOL_BYTES = 4 * 2**20


def spool_dir() -> Path:
    """Memory-backed files where the system has them (/dev/shm), else the temp folder."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        return shm
    return Path(tempfile.gettempdir())


@dataclass
class Body:
    """A request body: in memory, or in a spool file the caller removes (`discard`)."""

    data: bytes | None
    path: Path | None
    size: int

    def discard(self) -> None:
        if self.path is not None:
            self.path.unlink(missing_ok=True)


async def read_body(request: Request, max_bytes: int, timeout: float) -> Body:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise ProblemError(413, f"the body declares {declared} bytes; at most {max_bytes}")
    reader = _Reader(max_bytes)
    try:
        async with asyncio.timeout(timeout):
            async for chunk in request.stream():
                reader.add(chunk)
    except TimeoutError:
        reader.abandon()
        raise ProblemError(408, f"the body did not arrive within {timeout:g} s") from None
    except ProblemError:
        reader.abandon()
        raise
    return reader.body()


class _Reader:
    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.chunks: list[bytes] = []
        self.size = 0
        self.file: tempfile._TemporaryFileWrapper[bytes] | None = None

    def add(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > self.max_bytes:
            raise ProblemError(413, f"the body exceeds {self.max_bytes} bytes")
        if self.file is None and self.size > SPOOL_BYTES:
            self.file = tempfile.NamedTemporaryFile(  # noqa: SIM115 - kept open across chunks
                prefix="apportion-request-", dir=spool_dir(), delete=False
            )
            self.file.writelines(self.chunks)
            self.chunks = []
        if self.file is not None:
            self.file.write(chunk)
        else:
            self.chunks.append(chunk)

    def body(self) -> Body:
        if self.file is None:
            return Body(b"".join(self.chunks), None, self.size)
        self.file.close()
        return Body(None, Path(self.file.name), self.size)

    def abandon(self) -> None:
        if self.file is not None:
            self.file.close()
            Path(self.file.name).unlink(missing_ok=True)
