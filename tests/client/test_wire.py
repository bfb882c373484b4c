"""How answers the test service does not give on demand are read (a 504, a proxy's HTML page,
a date in Retry-After): built as the bytes a server would send."""

from __future__ import annotations

import email.utils
import time

import httpx
import pytest

from apportion.client import ServiceError, SolveStopped
from apportion.client.wire import check, retry_after

PROBLEM = {"content-type": "application/problem+json"}


def test_504_is_solve_stopped_with_the_detail() -> None:
    body = (
        b'{"type": "about:blank", "title": "t", "status": 504, "detail": "stopped", "errors": []}'
    )
    response = httpx.Response(504, headers={**PROBLEM, "x-request-id": "r1"}, content=body)
    with pytest.raises(SolveStopped) as caught:
        check(response)
    assert (caught.value.status, caught.value.detail, caught.value.request_id) == (
        504,
        "stopped",
        "r1",
    )


def test_a_proxy_page_is_a_service_error_with_its_text() -> None:
    response = httpx.Response(502, content=b"<html>Bad Gateway</html>")
    with pytest.raises(ServiceError, match="HTTP 502: <html>Bad Gateway"):
        check(response)


def test_retry_after_reads_seconds_and_dates() -> None:
    assert retry_after(httpx.Response(503, headers={"retry-after": "7"})) == 7.0
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= (retry_after(httpx.Response(503, headers={"retry-after": later})) or 0) <= 30
    assert retry_after(httpx.Response(503, headers={"retry-after": "soon"})) is None
    assert retry_after(httpx.Response(503)) is None
