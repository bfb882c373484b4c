"""Answers that explain themselves: evidence a formulation hands back (`evidence.py`), the
reason vocabulary (`codes.py`) and the explanation block built from them (`build.py`)."""

from __future__ import annotations

from solver.explain.build import explain
from solver.explain.codes import Reason
from solver.policy import AllocationEvidence, DecisionEvidence, Evidence, LpStage

__all__ = [
    "AllocationEvidence",
    "DecisionEvidence",
    "Evidence",
    "LpStage",
    "Reason",
    "explain",
]
