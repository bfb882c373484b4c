"""A command run on a pseudo-terminal, as a person at a terminal runs it: its output is a TTY
(so the command line draws tables and progress bars), of a given width; what it wrote comes back
as plain text (escape sequences removed, carriage returns kept as line ends)."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: CSI and OSC sequences: colours, cursor moves, the progress bar's redraws.
ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b[=>]")


@dataclass(frozen=True)
class Screen:
    exit_code: int
    text: str  # everything written to the terminal, plain

    @property
    def lines(self) -> list[str]:
        return self.text.splitlines()


def on_terminal(args: list[str], columns: int = 120, timeout: float = 600) -> Screen:
    """`python -m apportion ARGS` with stdout and stderr on one pseudo-terminal `columns` wide."""
    primary, secondary = pty.openpty()
    environment = {**os.environ, "COLUMNS": str(columns), "LINES": "50", "TERM": "xterm"}
    environment.pop("NO_COLOR", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "apportion", *args],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=secondary,
        stderr=secondary,
        env=environment,
        close_fds=True,
    )
    os.close(secondary)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([primary], [], [], 0.5)
            if ready:
                try:
                    data = os.read(primary, 65536)
                except OSError:  # the other side closed: the command ended
                    break
                if not data:
                    break
                chunks.append(data)
            elif process.poll() is not None:
                break
        code = process.wait(timeout=max(deadline - time.monotonic(), 1))
    finally:
        if process.poll() is None:
            process.kill()
        os.close(primary)
    raw = b"".join(chunks).decode("utf-8", errors="replace")
    plain = ESCAPES.sub("", raw).replace("\r\n", "\n").replace("\r", "\n")
    return Screen(code, plain)
