"""/docs as a person sees it: Debian's Chromium, headless, loads the page from a real service
under a name other than localhost, with every other name unresolvable (no request can leave the
machine), and the rendered page lists every operation of the OpenAPI document. Chromium's own
network log shows that the page asked nothing of any other host (no CDN, no validator). And
"Try it out" → "Execute" on every POST operation, clicked in the page, shows a 200 answer to
the body the page filled in (the document's example).

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
from tests.browser import Unavailable, chromium, tab_on

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


#: In the page: open one operation, "Try it out", "Execute" with the body Swagger UI filled in,
#: and read back that body and the status and body of the answer the page shows.
TRY_IT_OUT = """
(async () => {
  const until = async (find, what) => {
    for (let i = 0; i < 1200; i++) {
      const found = find();
      if (found) return found;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error("never appeared: " + what);
  };
  const op = await until(() => document.getElementById(OPERATION), "the operation");
  op.querySelector(".opblock-summary-control").click();
  (await until(() => op.querySelector(".try-out__btn"), "Try it out")).click();
  const sent = (await until(() => op.querySelector("textarea.body-param__text"), "body")).value;
  (await until(() => op.querySelector("button.execute"), "Execute")).click();
  const cell = await until(
    () => op.querySelector(".live-responses-table .response .response-col_status"), "answer");
  const body = op.querySelector(".live-responses-table .response-col_description pre");
  return {sent, status: cell.textContent.trim(), body: body ? body.textContent : ""};
})()
"""


def test_try_it_out_then_execute_answers_200_on_every_post(
    browser: str, service: Service, tmp_path: Path
) -> None:
    document = httpx.get(f"{service.base}/openapi.json", timeout=30).json()
    posts = [
        (path, methods["post"]) for path, methods in document["paths"].items() if "post" in methods
    ]
    assert {path for path, _ in posts} >= {"/v1/solve", "/v1/compare", "/v1/rounds"}
    port = urlsplit(service.base).port
    flags = [f"--host-resolver-rules=MAP {NAME} 127.0.0.1, MAP * ~NOTFOUND", "--no-proxy-server"]
    for path, operation in posts:
        block = f"operations-{operation['tags'][0]}-{operation['operationId']}"
        with tab_on(browser, f"http://{NAME}:{port}/docs", tmp_path / block, flags) as tab:
            shown = tab.evaluate(TRY_IT_OUT.replace("OPERATION", json.dumps(block)))
        example = operation["requestBody"]["content"]["application/json"]["example"]
        assert json.loads(shown["sent"]) == example, path  # what the page filled in
        assert shown["status"] == "200", (path, shown)
        assert json.loads(shown["body"]), path  # the answer's document, shown on the page
