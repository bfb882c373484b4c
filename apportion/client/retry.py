"""When and how long to retry, as tenacity settings shared by the sync and async clients.

Retried: a 503 (every solver busy and the queue full: the request was never started) and a
connection that could not be made or was dropped before an answer. Every request is a pure
function of its body (the service is stateless), so repeating one is always safe. The wait is
the 503's `Retry-After` when it gives one, else exponential backoff with jitter; both are capped
at `max_wait`. Anything else (an answer, a read timeout) is returned or raised at once.

Each retry is logged as a warning on the `apportion.client` logger before its wait (what
failed, which attempt of how many, how long until the next): a client waiting on a dead service
says so on stderr even where the program configured no logging (Python's last-resort handler
prints warnings); `logging.getLogger("apportion.client").setLevel(logging.ERROR)` quiets it.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Any

import httpx
from tenacity import (
    RetryCallState,
    retry_if_exception_type,
    retry_if_result,
    stop_after_attempt,
    wait_exponential,
    wait_random,
)
from tenacity.wait import wait_base

from apportion.client.errors import ServiceUnreachable
from apportion.client.wire import retry_after

log = logging.getLogger("apportion.client")

RETRY_STATUSES = frozenset({503})
#: Failures where the service cannot have answered (or its answer was cut): worth another try.
TRANSIENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.RemoteProtocolError)
#: Without a `Retry-After`: 0.5 s, 1 s, 2 s, ... plus up to 0.25 s of jitter (clients that
#: failed together do not come back together).
BACKOFF = wait_exponential(multiplier=0.5) + wait_random(0, 0.25)


class WaitRetryAfter(wait_base):
    """The answer's `Retry-After`, else `fallback`'s wait; never more than `cap` seconds."""

    def __init__(self, fallback: wait_base, cap: float) -> None:
        self.fallback = fallback
        self.cap = cap

    def __call__(self, retry_state: RetryCallState) -> float:
        outcome = retry_state.outcome
        if outcome is not None and not outcome.failed:
            hinted = retry_after(outcome.result())
            if hinted is not None:
                return min(hinted, self.cap)
        return min(self.fallback(retry_state), self.cap)


def _saturated(response: Any) -> bool:
    return isinstance(response, httpx.Response) and response.status_code in RETRY_STATUSES


def _give_up(retry_state: RetryCallState) -> httpx.Response:
    """After the last attempt: the last answer (a 503, mapped to `ServiceUnavailable` by the
    caller), or the connection failure as `ServiceUnreachable`."""
    outcome = retry_state.outcome
    assert outcome is not None
    if outcome.failed:
        exc = outcome.exception()
        attempts = retry_state.attempt_number
        detail = f"{type(exc).__name__}: {exc} (after {attempts} attempts)"
        raise ServiceUnreachable(detail) from exc
    response: httpx.Response = outcome.result()
    return response


def _announce(attempts: int, retry_state: RetryCallState) -> None:
    """Before each wait: the request, what went wrong, the attempt of `attempts` and the wait."""
    if not log.isEnabledFor(logging.WARNING):
        return
    outcome = retry_state.outcome
    if outcome is None:
        return
    if outcome.failed:
        exc = outcome.exception()
        what = f"{type(exc).__name__}: {exc}"
    else:
        what = f"HTTP {outcome.result().status_code}"
    method, path = (*retry_state.args, "", "")[:2]
    wait = retry_state.next_action.sleep if retry_state.next_action is not None else 0.0
    log.warning(
        "%s %s: attempt %d of %d failed (%s); retrying in %.2f s",
        method,
        path,
        retry_state.attempt_number,
        attempts,
        what,
        wait,
    )


def retry_settings(retries: int, max_wait: float) -> dict[str, Any]:
    """Keyword arguments for `tenacity.Retrying` / `AsyncRetrying`: at most `retries` more
    attempts after the first, each wait at most `max_wait` seconds."""
    if retries < 0:
        raise ValueError(f"retries must be 0 or more, not {retries}")
    if max_wait < 0:
        raise ValueError(f"max_retry_wait must be 0 or more, not {max_wait}")
    return {
        "stop": stop_after_attempt(retries + 1),
        "wait": WaitRetryAfter(BACKOFF, max_wait),
        "retry": retry_if_exception_type(TRANSIENT) | retry_if_result(_saturated),
        "retry_error_callback": _give_up,
        "before_sleep": partial(_announce, retries + 1),
    }
