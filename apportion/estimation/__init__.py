"""Throughputs as a cluster learns them: estimated from a reference table and a few profiles,
tightened by the progress observed round after round, each with its uncertainty (see
docs/ESTIMATION.md). Produces the throughputs a snapshot carries; policies never import it."""

from __future__ import annotations

from apportion.estimation.document import (
    Cell,
    EstimateDocument,
    EstimateInput,
    EstimateOptions,
    JobEstimate,
    JobSpec,
    Observation,
    PairEstimate,
    PairProfile,
)
from apportion.estimation.posterior import estimate, parse_estimate

__all__ = [
    "Cell",
    "EstimateDocument",
    "EstimateInput",
    "EstimateOptions",
    "JobEstimate",
    "JobSpec",
    "Observation",
    "PairEstimate",
    "PairProfile",
    "estimate",
    "parse_estimate",
]
