"""What Gavel's own simulator reports for its own policies on its physical-cluster trace
(`source/gavel_simulator_jct.json`: the command, commit and settings it was run with), keyed by
the apportion policy each one corresponds to, to set simulations beside."""

from __future__ import annotations

import json
from typing import Any

from apportion.refdata import SOURCE

REFERENCE_RUNS = SOURCE / "gavel_simulator_jct.json"


def reference_runs() -> dict[str, Any]:
    """The file as published here: figures, command, commit, cluster and seed."""
    loaded: dict[str, Any] = json.loads(REFERENCE_RUNS.read_text())
    return loaded


def reference_jct() -> dict[str, float]:
    """Average JCT in seconds per apportion policy (`max_min_agnostic` for Gavel's
    heterogeneity-agnostic max-min)."""
    runs = reference_runs()
    names: dict[str, str] = runs["apportion_policy"]
    return {names[gavel]: float(value) for gavel, value in runs["average_jct_seconds"].items()}
