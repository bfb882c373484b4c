"""Debian's Chromium for tests that look at a page as a person does: found on the PATH, or
installed with apt-get (the Debian package `chromium`) when missing. `Unavailable` says why it
can be neither (no apt-get, not root, the install failed); the tests turn that into a skip.
`tab_on` drives one tab over Chromium's DevTools protocol, for the tests that click."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

PACKAGE = "chromium"
NAMES = ("chromium", "chromium-browser")


class Unavailable(Exception):
    """Chromium cannot be had on this machine."""


def chromium() -> str:
    """The Chromium executable, installed first if needed."""
    found = _found()
    if found is not None:
        return found
    if shutil.which("apt-get") is None:
        raise Unavailable("Chromium is not installed and there is no apt-get to install it")
    if os.geteuid() != 0:
        raise Unavailable("Chromium is not installed and installing it needs root")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    # Another process may hold the package lock (a parallel install): wait for it.
    lock = ["-o", "DPkg::Lock::Timeout=600"]
    for command in (
        ["apt-get", *lock, "update", "-qq"],
        ["apt-get", *lock, "install", "-y", "-qq", "--no-install-recommends", PACKAGE],
    ):
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1200)
        if done.returncode != 0:
            raise Unavailable(f"{' '.join(command)} failed: {done.stderr.strip()[-300:]}")
    found = _found()
    if found is None:
        raise Unavailable(f"apt-get installed {PACKAGE}, but no chromium executable is found")
    return found


def _found() -> str | None:
    for name in NAMES:
        path = shutil.which(name)
        if path is not None:
            return path
    return None


class Page:
    """One tab of a headless Chromium driven over its DevTools protocol (a websocket): open a
    URL, run a script in it and read back what it returns, as a person's clicks would."""

    def __init__(self, socket: Any, session: str) -> None:
        self._socket = socket
        self._session = session
        self._ids = itertools.count(1)
        self._events: list[str] = []  # the methods of the events that came in, in order

    def call(self, method: str, session: bool = True, **params: Any) -> dict[str, Any]:
        ident = next(self._ids)
        message: dict[str, Any] = {"id": ident, "method": method, "params": params}
        if session:
            message["sessionId"] = self._session
        self._socket.send(json.dumps(message))
        while True:  # events arrive in between; the answer carries our id
            answer = json.loads(self._socket.recv(timeout=300))
            if "method" in answer:
                self._events.append(answer["method"])
            if answer.get("id") == ident:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                result: dict[str, Any] = answer["result"]
                return result

    def open(self, url: str) -> None:
        """Load `url` in the tab and wait for its load event."""
        self.call("Page.enable")
        self._events.clear()
        self.call("Page.navigate", url=url)
        while "Page.loadEventFired" not in self._events:
            event = json.loads(self._socket.recv(timeout=300))
            self._events.append(event.get("method", ""))

    def evaluate(self, script: str) -> Any:
        """The value of `script` (an expression; a promise is awaited) in the page."""
        done = self.call(
            "Runtime.evaluate", expression=script, awaitPromise=True, returnByValue=True
        )
        if "exceptionDetails" in done:
            raise RuntimeError(done["exceptionDetails"].get("exception", {}).get("description"))
        return done["result"].get("value")


@contextmanager
def tab_on(browser: str, url: str, folder: Path, flags: Sequence[str] = ()) -> Iterator[Page]:
    """A tab showing `url` in a headless Chromium started with `flags`; Chromium is stopped
    afterwards."""
    from websockets.sync.client import connect

    process = subprocess.Popen(
        [
            browser,
            "--headless",
            "--no-sandbox",  # as root
            "--disable-gpu",
            "--remote-debugging-port=0",
            f"--user-data-dir={folder / 'profile'}",
            *flags,
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        endpoint = None
        for line in process.stderr:  # Chromium says where its DevTools listen, first thing
            if line.startswith("DevTools listening on "):
                endpoint = line.split()[-1]
                break
        if endpoint is None:
            raise Unavailable("Chromium did not open its DevTools endpoint")
        # The rest of its stderr is read away, so that a full pipe never stalls it.
        threading.Thread(target=process.stderr.read, daemon=True).start()
        with connect(endpoint, max_size=None) as socket:
            browser_side = Page(socket, "")
            target = browser_side.call("Target.createTarget", session=False, url="about:blank")
            attached = browser_side.call(
                "Target.attachToTarget", session=False, targetId=target["targetId"], flatten=True
            )
            tab = Page(socket, attached["sessionId"])
            tab.open(url)
            yield tab
    finally:
        process.kill()
        process.wait()
