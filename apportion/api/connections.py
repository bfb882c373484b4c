"""The server's HTTP connections, each with a deadline for its request headers.

uvicorn closes idle keep-alive connections, but a connection that has started a request and
sends its headers a byte at a time is held open for as long as the client likes, one of many
such connections costing the server nothing to keep. Here every request's headers must be
complete within `header_timeout` seconds of the connection opening, or of the previous answer
on it; otherwise the connection is closed, with a 408 problem if a request had begun. The
body has its own limit (`body_timeout`, checked where the body is read).
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from apportion.api.problems import MEDIA_TYPE, problem_body


def with_header_timeout(seconds: float) -> type[asyncio.Protocol]:
    """uvicorn's HTTP/1.1 protocol (httptools) with a header deadline of `seconds`."""

    class HeaderDeadline(HttpToolsProtocol):
        deadline: asyncio.TimerHandle | None = None
        begun = False  # bytes of a request arrived since the deadline was armed

        def data_received(self, data: bytes) -> None:
            self.begun = True
            super().data_received(data)

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
                self.deadline = self.loop.call_later(seconds, self._expire, self.cycle)

        def _disarm(self) -> None:
            if self.deadline is not None:
                self.deadline.cancel()
                self.deadline = None

        def _expire(self, cycle: Any) -> None:
            # A request whose headers completed has a new cycle; while one is being answered
            # (a pipelined one included), its body and its answer are bounded elsewhere.
            waiting = self.cycle is cycle and (cycle is None or cycle.response_complete)
            if not waiting or self.transport.is_closing():
                return
            if self.begun:
                self.transport.write(late_headers(seconds))
            # An idle connection is closed without a word: a client keeping it for its next
            # request would take an answer found there for that request's.
            self.transport.close()

    return HeaderDeadline


def late_headers(seconds: float) -> bytes:
    """The whole 408 answer, written straight to the connection (no request to route)."""
    body = problem_body(408, f"the request headers did not arrive within {seconds:g} s")
    head = (
        "HTTP/1.1 408 Request Timeout\r\n"
        f"content-type: {MEDIA_TYPE}\r\n"
        f"content-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode("ascii") + body
