"""Debian's Chromium for tests that look at a page as a person does: found on the PATH, or
installed with apt-get (the Debian package `chromium`) when missing. `Unavailable` says why it
can be neither (no apt-get, not root, the install failed); the tests turn that into a skip."""

from __future__ import annotations

import os
import shutil
import subprocess

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
