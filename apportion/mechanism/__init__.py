"""How an allocation is enacted: which jobs run in the next round, on which nodes and GPUs.

`next_round` is Gavel's round-based mechanism (see `mechanism.rounds` for the exact rule);
`allocation_of` reads a result document's allocation and pair allocations for it.
"""

from __future__ import annotations

from apportion.mechanism.arrays import NEGLIGIBLE
from apportion.mechanism.priority import Order, Rule
from apportion.mechanism.rounds import Planner, allocation_of, next_round
from apportion.mechanism.types import Assignment, PairShare, Round

__all__ = [
    "NEGLIGIBLE",
    "Assignment",
    "Order",
    "PairShare",
    "Planner",
    "Round",
    "Rule",
    "allocation_of",
    "next_round",
]
