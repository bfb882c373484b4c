"""The solver pool's life beside the server's: started with it, drained the moment a stop
signal arrives (not when the server's graceful wait is over), closed with it."""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from types import FrameType
from typing import Any

from fastapi import FastAPI

from apportion.api.deps import ensure_pool
from apportion.api.pool import SolvePool
from apportion.api.settings import Settings

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def pool_lifespan(settings: Settings) -> Callable[[FastAPI], AbstractAsyncContextManager[None]]:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        pool = ensure_pool(app)  # warm workers before the first request rather than during it
        with drain_on_signals(pool):
            yield
        app.state.pool = None  # a later request (a restarted app in tests) starts a new one
        # In a thread: the event loop still has answers to send while running solves end.
        bound = settings.max_time_limit + settings.stop_grace_seconds
        await asyncio.to_thread(pool.close, bound)

    return lifespan


@contextmanager
def drain_on_signals(pool: SolvePool) -> Iterator[None]:
    """On SIGTERM or SIGINT, drain the pool, then let the server's own handler run (uvicorn's
    stops accepting and waits for open requests): requests waiting for a worker are answered
    503 at once instead of being started while the server waits."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signals reach the main thread only (a test client's app runs in another)
        return
    before: dict[signal.Signals, Any] = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}

    def on_stop(sig: int, frame: FrameType | None) -> None:
        pool.drain()
        _chain(before[signal.Signals(sig)], sig, frame)

    for sig in STOP_SIGNALS:
        signal.signal(sig, on_stop)
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def _chain(handler: Any, sig: int, frame: FrameType | None) -> None:
    if callable(handler):
        handler(sig, frame)
    elif handler == signal.SIG_DFL:
        signal.signal(sig, signal.SIG_DFL)
        signal.raise_signal(sig)
