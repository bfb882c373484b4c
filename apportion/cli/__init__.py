"""The command line: `solve SNAPSHOT.json` (the main verb), and `solve schema`, `solve policies`,
`solve export`. Heavy modules are imported by the command that needs them, so `--help` and a
max-min solve start fast."""

from __future__ import annotations

from apportion.cli.app import main, run

__all__ = ["main", "run"]
