"""The comma-separated lists and cluster forms `solve simulate` reads (rigid and elastic)."""

from __future__ import annotations

from typing import Any


def listed(text: str, kind: type[Any], flag: str) -> list[Any]:
    try:
        values = [kind(part.strip()) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ValueError(f"{flag} {text!r}: expected comma-separated {kind.__name__}s") from None
    if not values:
        raise ValueError(f"{flag} {text!r}: give at least one value")
    return values


#: The GPU types of Gavel's `--cluster_spec V:P:K` (its simulator's order).
GAVEL_SPEC_TYPES = ("v100", "p100", "k80")


def parse_cluster(text: str) -> dict[str, int]:
    """TYPE=GPUS,... or Gavel's V100:P100:K80 counts (`36:36:36`; a type with 0 is left out)."""
    parts = text.split(":")
    if len(parts) > 1:
        if len(parts) != len(GAVEL_SPEC_TYPES) or not all(p.strip().isdigit() for p in parts):
            raise ValueError(f"--cluster {text!r}: Gavel's form is V100:P100:K80 GPU counts")
        counts = dict(zip(GAVEL_SPEC_TYPES, (int(p) for p in parts), strict=True))
        if not any(counts.values()):
            raise ValueError(f"--cluster {text!r}: no GPUs")
        return {name: count for name, count in counts.items() if count > 0}
    cluster = {}
    for part in text.split(","):
        name, sep, count = part.partition("=")
        if not sep or not name.strip() or not count.strip().isdigit() or int(count) < 1:
            raise ValueError(
                f"--cluster {text!r}: expected TYPE=GPUS,... with whole GPU counts, or Gavel's "
                "V100:P100:K80"
            )
        cluster[name.strip()] = int(count)
    return cluster
