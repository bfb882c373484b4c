"""Readable names that survive the .lp and .mps formats.

Labels are `x[job-3,v100]`; LP readers take neither brackets nor `-` `+` `:` in names (HiGHS
falls back to `c0, c1, ...` for the whole model when one name is invalid), so brackets become
parentheses and any other character outside the portable set becomes `_`. Labels that collide
after that get a `~2`, `~3`, ... suffix: names must stay unique.
"""

from __future__ import annotations

import re

# Characters both the CPLEX LP format and HiGHS's LP writer accept in a name.
_INVALID = re.compile(r"[^A-Za-z0-9_.,()!#$%&;?@{}~]")
_BRACKETS = str.maketrans("[]", "()")


def portable_name(label: str) -> str:
    name = _INVALID.sub("_", label.translate(_BRACKETS))
    # LP readers take a leading digit or period as the start of a number.
    return f"_{name}" if not name or name[0].isdigit() or name[0] == "." else name


def portable_names(labels: list[str]) -> list[str]:
    """`portable_name` of each label, made unique."""
    out = [portable_name(label) for label in labels]
    if len(set(out)) == len(out):
        return out
    seen: dict[str, int] = {}
    taken = set(out)
    for i, name in enumerate(out):
        count = seen.get(name, 0) + 1
        seen[name] = count
        if count > 1:
            candidate = f"{name}~{count}"
            while candidate in taken:
                count += 1
                candidate = f"{name}~{count}"
            seen[name] = count
            taken.add(candidate)
            out[i] = candidate
    return out
