"""Answers that explain themselves: evidence a formulation hands back (`evidence.py`), the
reason vocabulary (`codes.py`) and the explanation block built from them (`build.py`)."""

from __future__ import annotations

from apportion.solver.explain.build import explain
from apportion.solver.explain.codes import Reason
from apportion.solver.policy import AllocationEvidence, DecisionEvidence, Evidence, LpStage

__all__ = [
    "AllocationEvidence",
    "DecisionEvidence",
    "Evidence",
    "LpStage",
    "Reason",
    "explain",
]
