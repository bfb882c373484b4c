"""The command line run as a real subprocess, as the tests of this folder run it."""

from __future__ import annotations

import os
import subprocess
import sys


def run(
    *args: str, env: dict[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m apportion *args`, with `env` on top of this process's environment."""
    return subprocess.run(
        [sys.executable, "-m", "apportion", *args],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=120,
        env=None if env is None else {**os.environ, **env},
    )
