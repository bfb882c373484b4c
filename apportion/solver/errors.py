"""Errors a caller can act on: bad input names the field and the reason."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import ValidationError


@dataclass(frozen=True)
class FieldError:
    """One problem with the input: where (a path of keys and indices) and why."""

    loc: tuple[str | int, ...]
    msg: str
    type: str = "value_error"

    @property
    def path(self) -> str:
        """`jobs[3].throughput.a100` style rendering of `loc`."""
        out = ""
        for part in self.loc:
            if isinstance(part, int):
                out += f"[{part}]"
            else:
                out += f".{part}" if out else str(part)
        return out or "input"


class InputError(ValueError):
    """The request cannot be solved as given (HTTP 422, CLI exit code 2)."""

    def __init__(self, errors: Sequence[FieldError]) -> None:
        self.errors = tuple(errors)
        super().__init__(self.one_line())

    def __reduce__(self) -> tuple[object, ...]:
        # Rebuilt from its errors, so it crosses process pools (sweeps, the service's workers).
        return (type(self), (self.errors,))

    @classmethod
    def single(cls, loc: tuple[str | int, ...], msg: str, kind: str = "value_error") -> InputError:
        return cls([FieldError(loc, msg, kind)])

    @classmethod
    def from_validation(
        cls, exc: ValidationError, prefix: tuple[str | int, ...] = ()
    ) -> InputError:
        return cls(
            [
                FieldError(prefix + tuple(e["loc"]), _clean_msg(e["msg"]), e["type"])
                for e in exc.errors(include_url=False)
            ]
        )

    def one_line(self, limit: int | None = 5) -> str:
        """Every error as `path: reason`, joined by "; ": the first `limit` of them and how many
        more (None: all, as the command line reports them)."""
        shown = self.errors if limit is None else self.errors[:limit]
        text = "; ".join(f"{e.path}: {e.msg}" for e in shown)
        more = len(self.errors) - len(shown)
        return text + (f"; and {more} more" if more > 0 else "")


def _clean_msg(msg: str) -> str:
    # pydantic prefixes messages raised from validators with "Value error, ".
    return msg.removeprefix("Value error, ")
