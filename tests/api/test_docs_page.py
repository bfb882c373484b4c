"""/docs as a person sees it: Debian's Chromium, headless, loads the page from a real service
under a name other than localhost, with every other name unresolvable (no request can leave the
machine), and the rendered page lists every operation of the OpenAPI document. Chromium's own
network log shows that the page asked nothing of any other host (no CDN, no validator).

Chromium is installed by `tests/browser.py` when missing (the Debian package `chromium`); the
test is skipped, saying why, where it can be neither found nor installed."""

from __future__ import annotations

import html
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.api.service import Service, running_service
from tests.browser import Unavailable, chromium

NAME = "apportion.test"  # what a proxy in front of the service would be called


@pytest.fixture(scope="module")
def browser() -> str:
    try:
        return chromium()
    except Unavailable as exc:
        pytest.skip(f"no Chromium: {exc}")


@pytest.fixture(scope="module")
def service() -> Iterator[Service]:
    with running_service(workers="1") as running:
        yield running


@pytest.fixture(scope="module")
def page(
    browser: str, service: Service, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    """The rendered DOM of /docs and the URLs the page requested."""
    folder = tmp_path_factory.mktemp("chromium")
    port = urlsplit(service.base).port
    url = f"http://{NAME}:{port}/docs"
    done = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",  # as root
            "--disable-gpu",
            "--no-proxy-server",
            # The service's name resolves to the loopback address; every other name to nothing.
            f"--host-resolver-rules=MAP {NAME} 127.0.0.1, MAP * ~NOTFOUND",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--disable-extensions",
            f"--user-data-dir={folder / 'profile'}",
            f"--log-net-log={folder / 'net.json'}",
            # Virtual time runs the page's scripts (fetching and rendering the document) to rest.
            "--virtual-time-budget=30000",
            "--dump-dom",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return {"dom": done.stdout, "requests": page_requests(folder / "net.json"), "url": url}


def page_requests(net_log: Path) -> list[str]:
    """URLs the page itself asked for: Chromium's network log, the requests whose network
    isolation key is the page's site (the browser's own background requests have others)."""
    log = json.loads(net_log.read_text())
    start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    urls = []
    for event in log["events"]:
        params = event.get("params") or {}
        if event["type"] == start and NAME in params.get("network_isolation_key", ""):
            urls.append(params["url"])
    return urls


def test_the_page_lists_every_operation(page: dict[str, Any], service: Service) -> None:
    document = httpx.get(f"{service.base}/openapi.json", timeout=30).json()
    dom = html.unescape(page["dom"])
    assert "Unable to render this definition" not in dom
    assert document["info"]["title"] in dom
    operations = [
        (method, path, spec)
        for path, methods in document["paths"].items()
        for method, spec in methods.items()
    ]
    assert len(operations) >= 7
    for method, path, spec in operations:
        # Swagger UI's block for one operation: its id from the tag and operationId, its path.
        assert f'id="operations-{spec["tags"][0]}-{spec["operationId"]}"' in dom, (method, path)
        assert f'data-path="{path}"' in dom, path
        assert spec["summary"] in dom, spec["summary"]


def test_the_page_asks_nothing_of_other_hosts(page: dict[str, Any]) -> None:
    origin = page["url"].removesuffix("/docs")
    requests = page["requests"]
    assert f"{origin}/openapi.json" in requests  # the page read the document from the service
    assert f"{origin}/static/swagger-ui/swagger-ui-bundle.js" in requests
    outside = [u for u in requests if not u.startswith(f"{origin}/")]
    assert outside == [], outside
