"""The documentation site builds with `mkdocs build --strict` (every link and anchor resolves,
every page is in the navigation's reach) and asks nothing of another host when it is viewed:
no web fonts, no stylesheet, script or image from a CDN."""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

pytest.importorskip("mkdocs", reason="the docs extra is not installed: pip install -e '.[docs]'")
pytest.importorskip("material", reason="the docs extra is not installed: pip install -e '.[docs]'")

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
URL = re.compile(r"(?:https?:)?//([A-Za-z0-9.-]+\.[A-Za-z]{2,}|localhost|127\.0\.0\.1)[^\s\"'<>)]*")
#: Hosts a page may name without the browser fetching anything: the service a reader runs
#: locally, and XML namespaces (inline SVG icons), which are names, not addresses.
LOCAL = {"127.0.0.1", "localhost"}
NAMESPACES = (
    "http://www.w3.org/2000/svg",
    "http://www.w3.org/1999/xlink",
    "http://www.sitemaps.org/schemas/sitemap/0.9",
)
#: Comments, in a page or in an SVG icon inlined in a stylesheet (`\3c !-- … --\3e`): licence
#: notices name their authors' sites, and nothing in a comment is fetched.
COMMENT = re.compile(r"(?:<|\\3c ?)!--.*?--(?:>|\\3e)", re.S)
#: The theme's script bundle names two CDN addresses it would load only on demand: the Mermaid
#: library, for a page with a Mermaid diagram (the site has none: checked below), and a
#: ResizeObserver polyfill, for a browser without ResizeObserver (every current one has it).
ON_DEMAND = ("https://unpkg.com/mermaid@", "https://unpkg.com/resize-observer-polyfill")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", "mkdocs.yml", "-d", out]
    environment = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [str(part) for part in command],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    return out


def _pages(site: Path, *suffixes: str) -> list[Path]:
    return [path for path in site.rglob("*") if path.suffix in suffixes]


def test_every_page_of_every_reader_is_built(site: Path) -> None:
    for section in ("authors", "operators", "researchers", "contributors"):
        assert (site / section / "index.html").is_file(), section
    for guide in ("SLURM", "RAY", "ARCHITECTURE", "FORMULATIONS", "EXPLANATIONS"):
        assert (site / f"{guide}.html").is_file(), guide
    home = (site / "index.html").read_text(encoding="utf-8")
    assert 'href="authors/index.html"' in home and 'href="contributors/index.html"' in home


def test_pages_and_stylesheets_name_no_other_host(site: Path) -> None:
    """No URL of another host in any page, stylesheet, sitemap or search index: not a font, not a
    stylesheet, not a script, not even a link (the site reads the same offline)."""
    found = {}
    for path in _pages(site, ".html", ".css", ".xml", ".json"):
        text = COMMENT.sub("", path.read_text(encoding="utf-8"))
        for namespace in NAMESPACES:
            text = text.replace(namespace, "")
        hosts = {match.group(1) for match in URL.finditer(text)} - LOCAL
        if hosts:
            found[path.relative_to(site).as_posix()] = sorted(hosts)
    assert not found, found
    assert _pages(site, ".html") and _pages(site, ".css")


def test_scripts_load_nothing_from_another_host_on_these_pages(site: Path) -> None:
    """The theme's scripts name only the two on-demand CDN addresses, and no page has what would
    make them fetch one (a Mermaid diagram); no script or font is loaded from elsewhere."""
    named = set()
    for path in _pages(site, ".js"):
        text = path.read_text(encoding="utf-8")
        named |= {
            u for u in re.findall(r"https?://[^\s\"'`\\)]+", text) if "unpkg" in u or "cdn" in u
        }
        assert "fonts.googleapis" not in text and "fonts.gstatic" not in text, path
    assert all(url.startswith(ON_DEMAND) for url in named), named
    for page in _pages(site, ".html"):
        text = page.read_text(encoding="utf-8")
        assert 'class="mermaid"' not in text, page
        sources = re.findall(r'<(?:script|link|img)[^>]+(?:src|href)="([^"]+)"', text)
        assert not [s for s in sources if s.startswith(("http:", "https:", "//"))], page


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # a test's server logs nothing
        return


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    """The built site over HTTP on 127.0.0.1 (a browser times what it fetches over HTTP)."""
    handler = functools.partial(_Quiet, directory=str(site))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.browser
@pytest.mark.parametrize("page", ["index.html", "authors/index.html", "researchers/gavel.html"])
def test_a_page_is_styled_and_loads_only_the_sites_own_files(
    served: str, page: str, tmp_path: Path
) -> None:
    """In Chromium, with every other host unreachable: the page has the theme's navigation and
    styles, and every resource it loaded (stylesheets, scripts, fonts, images, fetches) came
    from the site itself."""
    from tests.browser import Unavailable, chromium, tab_on

    try:
        browser = chromium()
    except Unavailable as exc:
        pytest.skip(str(exc))
    offline = ["--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
    with tab_on(browser, f"{served}/{page}", tmp_path, offline) as tab:
        loaded = tab.evaluate("performance.getEntriesByType('resource').map(e => e.name)")
        sheets = tab.evaluate("document.styleSheets.length")
        links = tab.evaluate("document.querySelectorAll('nav.md-nav a').length")
        header = tab.evaluate("getComputedStyle(document.querySelector('header')).position")
    assert loaded and all(url.startswith(served + "/") for url in loaded), loaded
    assert any(url.endswith(".css") for url in loaded) and any(u.endswith(".js") for u in loaded)
    assert sheets >= 2 and links >= 20 and header == "sticky"
