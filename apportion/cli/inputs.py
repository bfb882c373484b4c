"""Reading what the command line is given: snapshot files, KEY=VALUE options, output paths.
Every problem is a `UsageError` with one line naming the file or option and the reason."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any


class UsageError(Exception):
    """Bad input on the command line: exit code 2 with this one line."""


class CommandFailed(Exception):
    """Valid input, but the command could not finish (a policy failed mid-simulation): exit
    code 1 with this one line."""


def read_json(path: Path) -> Any:
    try:
        text = sys.stdin.read() if str(path) == "-" else path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise UsageError(f"cannot read {path}: {reason}") from None
    return decode_json(text, str(path))


def decode_json(text: str, what: str) -> Any:
    """`text` as JSON; every way it can fail is one `UsageError` naming `what`."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"{what} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:
        raise UsageError(f"{what} nests JSON too deeply to be a snapshot") from None
    except ValueError as exc:  # e.g. an integer past Python's 4,300-digit conversion limit
        raise UsageError(f"{what} is not usable JSON: {exc}") from None


def parse_options(pairs: list[str]) -> dict[str, Any]:
    """`-o KEY=VALUE` pairs; the value is read as JSON, else kept as a string."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--option {pair!r}: expected KEY=VALUE")
        try:
            options[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            options[key.strip()] = value
        except (RecursionError, ValueError):
            raise UsageError(f"--option {key.strip()}: the value is not usable JSON") from None
    return options


def write_text(path: Path, text: str, flag: str) -> None:
    """Write `text` to `path`; a failure (a full disk, /dev/full, a read-only file) is a
    `UsageError` naming the flag."""
    try:
        path.write_text(text, encoding="utf-8")
    except (OSError, UnicodeEncodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise UsageError(f"{flag} {path}: cannot write: {reason}") from None


def one_line(text: str) -> str:
    """Messages that may span lines (a validation report) as one line for stderr."""
    return "; ".join(part.strip() for part in text.splitlines() if part.strip())


def check_writable(path: Path, flag: str) -> None:
    """Before any work: `path` must be a file we can create or overwrite."""
    if path.is_dir():
        raise UsageError(f"{flag} {path}: is a directory; give a file name")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise UsageError(f"{flag} {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise UsageError(f"{flag} {path}: not writable")
