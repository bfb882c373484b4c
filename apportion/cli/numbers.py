"""Numbers in the command line's tables: one format everywhere, so columns line up."""

from __future__ import annotations

#: Decimals of every non-integer quantity in a table (fractions, GPUs, throughputs, prices).
DECIMALS = 4


def number(value: float | int | None) -> str:
    """`value` with DECIMALS decimals; scientific where that would show no digit (a price of
    1e-7) or too many (1e8 steps/s); an em dash for a missing or NaN value."""
    if value is None or value != value:
        return "—"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    magnitude = abs(value)
    if magnitude != 0 and (magnitude < 10**-DECIMALS or magnitude >= 1e7):
        return f"{value:.{DECIMALS - 1}e}"
    return f"{value:.{DECIMALS}f}"
