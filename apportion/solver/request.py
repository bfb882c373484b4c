"""A request's policy name and options, checked: the policy, its options and the common ones."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import ValidationError

from apportion.solver.backends import AUTO, backend_names, capable_of, get_backend
from apportion.solver.errors import FieldError, InputError, did_you_mean
from apportion.solver.options import PolicyOptions, SolveOptions
from apportion.solver.policy import AnyPolicy
from apportion.solver.registry import DEFAULT_POLICY, find_policy, resolve, unknown_policy

M = TypeVar("M", SolveOptions, PolicyOptions)
Checked = tuple[AnyPolicy, SolveOptions, PolicyOptions, str]
#: Option values whose requests are checked once (immutable, and told apart by their type).
PLAIN = frozenset({str, int, float, bool, type(None)})
#: Requests found valid, by policy name and options; bounded.
_VALID: dict[tuple[Any, ...], Checked] = {}
REMEMBERED = 256


def checked_request(policy: str | None, options: Mapping[str, Any]) -> Checked | InputError:
    """The policy `policy` names with its validated options and note, or every problem with
    the name and the options (returned, so a caller can report them with others). A valid
    request whose options are plain values is checked once per process (the same answer: the
    options are frozen)."""
    if not all(type(value) in PLAIN for value in options.values()):
        return _checked(policy, options)
    key = (policy, *((name, type(value), value) for name, value in options.items()))
    found = _VALID.get(key)
    if found is None:
        checked = _checked(policy, options)
        if isinstance(checked, InputError):
            return checked
        if len(_VALID) >= REMEMBERED:  # the oldest goes: a long-lived service sees many
            del _VALID[next(iter(_VALID))]
        _VALID[key] = checked
        found = checked
    return found


def _checked(policy: str | None, options: Mapping[str, Any]) -> Checked | InputError:
    try:
        chosen, implied, note = resolve_policy(policy, options)
        common, own = split_options(chosen, {**implied, **options})
        return chosen, check_backend(chosen, with_defaults(chosen, common)), own, note
    except InputError as exc:
        return exc


def with_defaults(policy: AnyPolicy, options: SolveOptions) -> SolveOptions:
    """The request's options with the policy's defaults where the request left them unset."""
    defaults = policy.defaults
    update = {
        key: value
        for key, value in (("time_limit", defaults.time_limit), ("mip_gap", defaults.mip_gap))
        if value is not None and getattr(options, key) is None
    }
    return options.model_copy(update=update) if update else options


def check_backend(policy: AnyPolicy, options: SolveOptions) -> SolveOptions:
    """Backend and sub-solver must exist and be able to solve the policy's problem class; an
    error names the alternatives. Returns the options with the solver's canonical spelling."""
    if options.backend == AUTO:
        if options.solver is not None:
            raise InputError.single(
                ("options", "solver"),
                f"solver {options.solver!r} needs a backend: set options.backend to one of "
                + "; ".join(
                    f"{n} ({', '.join(get_backend(n).available_solvers())})"
                    for n in backend_names()
                    if n != AUTO
                ),
            )
        return options
    backend = get_backend(options.backend)
    try:
        solver = backend.resolve_solver(options.solver)
    except ValueError as exc:
        raise InputError.single(("options", "solver"), str(exc)) from None
    for needs in sorted(policy.needs - backend.features_for(solver)):
        who = options.backend + (f" with solver {solver}" if solver else "")
        raise InputError.single(
            ("options", "solver" if solver else "backend"),
            f"backend {who} cannot solve {needs.value.upper()} models ({policy.name}); use "
            + ", ".join([AUTO, *capable_of(needs)]),
        )
    return options.model_copy(update={"solver": solver})


def resolve_policy(
    name: str | None, options: Mapping[str, Any]
) -> tuple[AnyPolicy, dict[str, Any], str]:
    """The policy `name` means (default: max-min fairness), the options its name implies and
    the note that says so. An option given against what the name implies is an error."""
    wanted = name or DEFAULT_POLICY
    resolved = resolve(wanted)
    found = None if resolved is None else find_policy(resolved.policy)
    if resolved is None or found is None:
        raise InputError.single(("policy",), unknown_policy(wanted))
    clashes = [
        FieldError(
            ("options", key),
            f"policy {wanted!r} implies {key}={value!r}; give {resolved.policy} to choose it",
        )
        for key, value in resolved.options.items()
        if key in options and options[key] != value
    ]
    if clashes:
        raise InputError(clashes)
    return found, dict(resolved.options), resolved.note


def split_options(policy: AnyPolicy, raw: Mapping[str, Any]) -> tuple[SolveOptions, PolicyOptions]:
    """Common options go to `SolveOptions`, the rest to the policy's own options model."""
    common_keys = SolveOptions.model_fields.keys()
    errors: list[FieldError] = []
    common = _validate(SolveOptions, {k: v for k, v in raw.items() if k in common_keys}, errors)
    own = _validate(policy.options, {k: v for k, v in raw.items() if k not in common_keys}, errors)
    if common is not None and common.backend not in backend_names():
        errors.append(
            FieldError(
                ("options", "backend"),
                f"unknown backend {common.backend!r}; choose one of {', '.join(backend_names())}",
            )
        )
    if errors or common is None or own is None:
        known = [*common_keys, *policy.options.model_fields]
        raise InputError([_near(e, known) for e in errors])
    return common, own


def _near(error: FieldError, known: list[str]) -> FieldError:
    """An unknown option's error with the nearest option name, common or the policy's own."""
    if error.type != "extra_forbidden" or len(error.loc) != 2:
        return error
    hint = did_you_mean(str(error.loc[1]), known)
    return FieldError(error.loc, error.msg + hint, error.type)


def _validate(model: type[M], data: dict[str, Any], errors: list[FieldError]) -> M | None:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors.extend(InputError.from_validation(exc, ("options",)).errors)
        return None
