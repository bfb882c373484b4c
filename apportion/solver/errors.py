"""Errors a caller can act on: bad input names the field and the reason."""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ValidationError


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
        cls,
        exc: ValidationError,
        prefix: tuple[str | int, ...] = (),
        model: type[BaseModel] | None = None,
    ) -> InputError:
        """The pydantic errors, located under `prefix`; with the `model` validated, a key it
        does not know is answered with the nearest field name ("did you mean")."""
        out = []
        for e in exc.errors(include_url=False):
            loc, msg = tuple(e["loc"]), _clean_msg(e["msg"])
            if model is not None and e["type"] == "extra_forbidden" and loc:
                msg += did_you_mean(str(loc[-1]), field_names(model, loc[:-1]))
            out.append(FieldError(prefix + loc, msg, e["type"]))
        return cls(out)

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


def did_you_mean(given: str, choices: Iterable[str]) -> str:
    """` (did you mean 'x'?)` for the choice nearest a misspelled name, "" if none is near."""
    near = difflib.get_close_matches(given, list(choices), n=1)
    return f" (did you mean {near[0]!r}?)" if near else ""


def field_names(model: type[BaseModel], loc: tuple[str | int, ...]) -> tuple[str, ...]:
    """The field names of the model found at `loc` inside `model` (through lists, dicts and
    optional fields), () where `loc` leads to no model."""
    current: object = model
    for part in loc:
        current = _inner_model(current)
        if current is None:
            return ()
        if isinstance(part, str):
            field = current.model_fields.get(part)
            if field is None:
                return ()
            current = field.annotation
    found = _inner_model(current)
    return tuple(found.model_fields) if found is not None else ()


def _inner_model(annotation: object) -> type[BaseModel] | None:
    """The one model an annotation holds (`Job`, `list[Job]`, `Job | None`), else None."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if isinstance(annotation, types.GenericAlias | types.UnionType) or typing.get_origin(
        annotation
    ):
        found = {m for arg in typing.get_args(annotation) if (m := _inner_model(arg))}
        return found.pop() if len(found) == 1 else None
    return None
