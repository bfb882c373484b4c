"""A trace that cannot be read as given: the file, the line (or job key) and the reason.

`TraceError` is an `InputError`, so the CLI and the API treat it like any bad input (exit code 2,
HTTP 422); its one line reads like a compiler's: `traces/x.trace:17: unknown job type 'Foo'`.
"""

from __future__ import annotations

from pathlib import Path

from apportion.solver.errors import FieldError, InputError


class TraceError(InputError):
    """A row of a trace file that no job can be made of (or a file that cannot be read)."""

    def __init__(
        self,
        source: str | Path,
        reason: str,
        *,
        line: int | None = None,
        item: str | None = None,
    ) -> None:
        self.source = str(source)
        self.reason = reason
        self.line = line
        self.item = item
        loc: tuple[str | int, ...] = (self.source,)
        if line is not None:
            loc += ("line", line)
        if item is not None:
            loc += ("job", item)
        super().__init__([FieldError(loc, reason)])

    @property
    def where(self) -> str:
        """`file:line`, `file (job 'key')` or the file alone."""
        if self.line is not None:
            return f"{self.source}:{self.line}"
        if self.item is not None:
            return f"{self.source} (job {self.item!r})"
        return self.source

    def one_line(self) -> str:
        return f"{self.where}: {self.reason}"

    def __reduce__(self) -> tuple[object, ...]:
        # Keyword-only fields: rebuild through a helper so the error crosses process pools.
        return (_rebuild, (self.source, self.reason, self.line, self.item))


def _rebuild(source: str, reason: str, line: int | None, item: str | None) -> TraceError:
    return TraceError(source, reason, line=line, item=item)
