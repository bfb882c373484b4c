"""Reading a request body within the service's limits: a size (413) and a time (408)."""

from __future__ import annotations

import asyncio

from fastapi import Request

from api.problems import ProblemError


async def read_body(request: Request, max_bytes: int, timeout: float) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise ProblemError(413, f"the body declares {declared} bytes; at most {max_bytes}")
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(timeout):
            async for chunk in request.stream():
                size += len(chunk)
                if size > max_bytes:
                    raise ProblemError(413, f"the body exceeds {max_bytes} bytes")
                chunks.append(chunk)
    except TimeoutError:
        raise ProblemError(408, f"the body did not arrive within {timeout:g} s") from None
    return b"".join(chunks)
