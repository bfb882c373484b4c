"""Reading what the command line is given: snapshot files, KEY=VALUE options, output paths.
Every problem is a `UsageError` with one line naming the file or option and the reason."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import IO, Any


class UsageError(Exception):
    """Bad input on the command line: exit code 2 with this one line."""


class CommandFailed(Exception):
    """Valid input, but the command could not finish (a policy failed mid-simulation): exit
    code 1 with this one line."""


#: The largest file the command line reads (a 1,000,000-job snapshot is about 170 MB);
#: APPORTION_MAX_INPUT_BYTES sets another.
MAX_INPUT_BYTES = 2**30
CHUNK = 2**20


def read_json(path: Path) -> dict[str, Any]:
    """The JSON object in `path` ('-': stdin), read within the size limit. Anything else (a
    file too large, an endless device, bytes that are no JSON object) is a `UsageError`."""
    import orjson  # not needed by `--help`

    limit = max_input_bytes()
    try:
        data = _read_bounded(path, limit)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        # orjson reads a large snapshot several times faster; what it refuses (NaN, integers
        # beyond 64 bits, bad bytes) is read or refused as Python's own reader does.
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UsageError(f"cannot read {path}: {exc}") from None
        value = decode_json(text, str(path))
    if not isinstance(value, dict):
        raise UsageError(f"{path} is not a JSON object: it holds {_kind(value)}")
    return value


def read_patch(given: str) -> dict[str, Any]:
    """`--patch`: inline JSON (a value starting with `{` or `[`), else a file ('-': stdin)."""
    if given.lstrip().startswith(("{", "[")):
        value = decode_json(given, "--patch")
        if not isinstance(value, dict):
            raise UsageError(f"--patch is not a JSON object: it holds {_kind(value)}")
        return value
    path = Path(given)
    if given != "-" and not path.exists():
        raise UsageError(f"--patch: no file {given!r}, nor inline JSON (an object in {{...}})")
    return read_json(path)


def max_input_bytes() -> int:
    raw = os.environ.get("APPORTION_MAX_INPUT_BYTES", "")
    if not raw:
        return MAX_INPUT_BYTES
    if not raw.isdigit() or int(raw) < 1:
        raise UsageError(f"APPORTION_MAX_INPUT_BYTES={raw!r}: expected a positive integer")
    return int(raw)


def _read_bounded(path: Path, limit: int) -> bytes:
    """At most `limit` bytes; stops at the first chunk when the input cannot be a JSON object
    (so `/dev/zero` or a binary file is refused at once, not after `limit` bytes)."""
    chunks: list[bytes] = []
    size = 0
    with _opened(path) as stream:
        while chunk := stream.read(CHUNK):
            if not chunks and not _may_open_an_object(chunk):
                raise UsageError(f"{path} is not a JSON object: it does not start with '{{'")
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise UsageError(f"{path} is larger than {limit} bytes, the input limit")
    return b"".join(chunks)


def _opened(path: Path) -> IO[bytes]:
    if str(path) == "-":
        return open(sys.stdin.fileno(), "rb", closefd=False)
    return path.open("rb")


def _may_open_an_object(head: bytes) -> bool:
    start = head.lstrip(b" \t\r\n")
    return not start or start[:1] == b"{"


def _kind(value: Any) -> str:
    kinds = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return kinds.get(type(value), "a number")


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


def write_text(path: Path, text: str | bytes, flag: str) -> None:
    """Write `text` (or UTF-8 bytes) to `path`; a failure (a full disk, /dev/full, a read-only
    file) is a `UsageError` naming the flag."""
    try:
        path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    except (OSError, UnicodeEncodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise UsageError(f"{flag} {path}: cannot write: {reason}") from None


def write_stdout(data: bytes) -> None:
    """UTF-8 bytes and a newline on standard output, after what was printed before them."""
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:  # a text stream only (a caller capturing the output)
        sys.stdout.write(data.decode("utf-8") + "\n")
        return
    sys.stdout.flush()
    buffer.write(data)
    buffer.write(b"\n")
    buffer.flush()


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
