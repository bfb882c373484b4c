"""The server's HTTP connections, each with a deadline and a size limit for its request headers.

uvicorn closes idle keep-alive connections, but a connection that has started a request and
sends its headers a byte at a time is held open for as long as the client likes, one of many
such connections costing the server nothing to keep. Here every request's headers must be
complete within `header_timeout` seconds of the connection opening, or of the previous answer
on it; otherwise the connection is closed, with a 408 problem if a request had begun. The
body has its own limit (`body_timeout`, checked where the body is read).

Nor does the parser bound the headers' size: a 20 MB header was taken whole (and held). Here
the bytes of a request's head (request line and headers) are counted as they arrive; beyond
`max_bytes` the connection is answered 431 and closed, having held at most one read more.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from apportion.api.problems import MEDIA_TYPE, problem_body


def bounded_headers(seconds: float, max_bytes: int) -> type[asyncio.Protocol]:
    """uvicorn's HTTP/1.1 protocol (httptools) with a header deadline of `seconds` and at most
    `max_bytes` of request line and headers."""
    return type("Bounded", (BoundedHeaders,), {"seconds": seconds, "max_bytes": max_bytes})


class BoundedHeaders(HttpToolsProtocol):
    seconds: float  # the header deadline
    max_bytes: int  # the largest head
    deadline: asyncio.TimerHandle | None = None
    begun = False  # bytes of a request arrived since the deadline was armed
    in_body = False  # the current request's head is complete
    head_bytes = 0  # bytes received while a request's head was incomplete

    def data_received(self, data: bytes) -> None:
        self.begun = True
        if not self.in_body:
            self.head_bytes += len(data)
        super().data_received(data)
        if not self.in_body and self.head_bytes > self.max_bytes:
            self._too_large()

    def on_headers_complete(self) -> None:
        self.in_body, self.head_bytes = True, 0
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self.in_body = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self.begun = False
        if not self.transport.is_closing():
            self.deadline = self.loop.call_later(self.seconds, self._expire, self.cycle)

    def _disarm(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None

    def _idle(self) -> bool:
        """No answer is under way on this connection (one written now would not cut into it)."""
        return self.cycle is None or self.cycle.response_complete

    def _expire(self, cycle: Any) -> None:
        # A request whose headers completed has a new cycle; while one is being answered
        # (a pipelined one included), its body and its answer are bounded elsewhere.
        if self.cycle is not cycle or not self._idle() or self.transport.is_closing():
            return
        if self.begun:
            self.transport.write(late_headers(self.seconds))
        # An idle connection is closed without a word: a client keeping it for its next
        # request would take an answer found there for that request's.
        self.transport.close()

    def _too_large(self) -> None:
        if self.transport.is_closing():
            return
        if self._idle():
            self.transport.write(large_headers(self.max_bytes))
        self.transport.close()


def late_headers(seconds: float) -> bytes:
    """The whole 408 answer, written straight to the connection (no request to route)."""
    body = problem_body(408, f"the request headers did not arrive within {seconds:g} s")
    return _answer("408 Request Timeout", body)


def _answer(status: str, body: bytes) -> bytes:
    head = (
        f"HTTP/1.1 {status}\r\n"
        f"content-type: {MEDIA_TYPE}\r\n"
        f"content-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


def large_headers(max_bytes: int) -> bytes:
    """The whole 431 answer, written straight to the connection."""
    detail = f"the request line and headers exceed {max_bytes} bytes"
    return _answer("431 Request Header Fields Too Large", problem_body(431, detail))
