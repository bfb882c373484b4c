"""Hand-solved water filling, hierarchical and space-sharing instances (FORMULATIONS §1a–1c).

The snapshots and their worked optima live with the policy tests; here each one becomes a case
that every backend must reproduce (HiGHS through warm re-solves, the others cold)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from apportion.solver import SolveResult, Status
from tests.conformance.case import Case
from tests.fairness_reference import Instance, check_result
from tests.formulations.fairness.max_min_oracle import scaled_max_min
from tests.formulations.fairness.test_hierarchical import FAIRNESS, FIFO_HEADS
from tests.formulations.fairness.test_space_sharing import pair_snapshot
from tests.formulations.fairness.test_water_filling import RECOVERY, THREE_LEVELS, WEIGHTED


def expect(field: str, values: dict[str, float]) -> Callable[[SolveResult], None]:
    def check(result: SolveResult) -> None:
        if field == "share":
            got = {j.id: j.normalized_share for j in result.jobs}
        else:
            got = {j.id: j.allocation.get(field, 0.0) for j in result.jobs}
        assert got == pytest.approx(values, rel=1e-6, abs=1e-7)

    return check


# Four GPUs, T = 1 (v = x ≤ 1). A (fifo) has a2 (oldest), a1, a3; B (fairness, W = 1) has b1, b2
# with w' = 1/2 each. Level 1: x_a2 ≥ t, x_b ≥ t/2: a2 hits its time at t = 1 and freezes.
# Level 2: a1 likewise. Level 3: a3 ≥ t, b ≥ t/2 with 2 GPUs left: 2t ≤ 2, t = 1. So every a runs
# all the time and each b half of it (fairness inside A would give the a's 2/3 each).
FIFO_QUEUE = {
    "gpu_types": [{"name": "v100", "count": 5}],
    "entities": [{"id": "A", "policy": "fifo"}, {"id": "B"}],
    "jobs": [
        {"id": "a1", "entity": "A", "arrival_time": 10, "throughput": {"v100": 1.0}},
        {"id": "a2", "entity": "A", "arrival_time": 0, "throughput": {"v100": 1.0}},
        {"id": "a3", "entity": "A", "arrival_time": 20, "throughput": {"v100": 1.0}},
        {"id": "b1", "entity": "B", "scale_factor": 2, "throughput": {"v100": 1.0}},
        {"id": "b2", "entity": "B", "scale_factor": 2, "throughput": {"v100": 1.0}},
    ],
}

SHARING = {"space_sharing": True}


def fifo_heads(result: SolveResult) -> None:
    """FIFO_HEADS's worked answer: `a` split by the first heads, `b` by the next ones."""
    got = {j.id: (j.allocation.get("a", 0.0), j.allocation.get("b", 0.0)) for j in result.jobs}
    want = {"j0": (0.5, 0), "j1": (0, 0), "j3": (0, 0.5), "j2": (0.5, 0), "j4": (0, 0.5)}
    for job, pair in want.items():
        assert got[job] == pytest.approx(pair, abs=1e-7)


def recovered(name: str) -> dict[str, object]:
    return next(c["snapshot"] for c in RECOVERY if c["name"].endswith(name))


def within_levels(snapshot: dict[str, object]) -> Callable[[SolveResult], None]:
    """A feasible allocation and, when optimal, each job at or above the level it froze at (to
    1e-5: a cold solve can leave a 1e-4-weight share unmet, whose time then comes from jobs at
    higher levels, a few 1e-6 of theirs)."""

    def check(result: SolveResult) -> None:
        inst = Instance(snapshot)
        u = check_result(result, inst) / inst.w
        if result.status is Status.OPTIMAL:
            level = np.array([job.metrics["level"] or 0.0 for job in result.jobs])
            assert (u[inst.active] >= level[inst.active] * (1 - 1e-5)).all()

    return check


# Water filling on snapshots where a level LP was once given up on (weights 1e-6…1e6; see
# test_water_filling): the minimum is the max-min level, from the independent scaled LP.
LEVEL_RECOVERY = [recovered("seed 8"), recovered("seed 85")]

CASES = [
    Case(
        "water filling three levels",
        "water_filling",
        THREE_LEVELS,
        1.0,
        check=expect("share", {"a0": 1, "a1": 1, "a2": 1, "b0": 1.5, "b1": 1.5, "c": 3}),
    ),
    Case(
        "water filling weights",
        "water_filling",
        WEIGHTED,
        2 / 3,
        check=expect("share", {"a": 2, "b": 2 / 3, "c": 2 / 3}),
    ),
    Case(
        "hierarchical fairness 1:3",
        "hierarchical",
        FAIRNESS,
        0.25,
        check=expect("v100", {"a1": 1 / 16, "a2": 3 / 16, "b1": 3 / 4}),
    ),
    # v = s·X here. Level 1: A's oldest job a2 rises with t and saturates at t = 1, B's jobs
    # (weight 1/2 each) reach v = 1/2 (X = 1/4). Level 2: a1 takes A's weight; B's jobs rise
    # from 1/2 (FORMULATIONS §1b: nobody loses what a level gave it) by Δ/2 while a1 gets Δ;
    # a1 saturates at Δ = 1 (B at v = 1, X = 1/2; 4 GPUs used). Level 3: a3 and B share the
    # last GPU: 1 + 1 + Δ + 4 (1/2 + Δ/4) = 5 gives Δ = 1/2, so a3 = 1/2, B's X = 5/8. Each
    # entity gets v = 2.5; the minimum of v / effective weight is a3's 0.5.
    Case(
        "hierarchical fifo queue",
        "hierarchical",
        FIFO_QUEUE,
        0.5,
        check=expect("v100", {"a1": 1, "a2": 1, "a3": 0.5, "b1": 0.625, "b2": 0.625}),
    ),
    # A FIFO head that cannot rise (j1) freezes alone; the one that can (j4) rises with the next
    # head of the other entity (see test_hierarchical). j1 gets nothing: the minimum is 0.
    Case(
        "hierarchical fifo heads",
        "hierarchical",
        FIFO_HEADS,
        0.0,
        check=fifo_heads,
        abs_tol=1e-7,
    ),
    Case(
        "water filling, a level LP recovered",
        "water_filling",
        LEVEL_RECOVERY[0],
        scaled_max_min(LEVEL_RECOVERY[0]),
        check=within_levels(LEVEL_RECOVERY[0]),
    ),
    Case(
        "water filling, a saturated floor recovered",
        "water_filling",
        LEVEL_RECOVERY[1],
        scaled_max_min(LEVEL_RECOVERY[1]),
        check=within_levels(LEVEL_RECOVERY[1]),
        ill_conditioned=True,
    ),
    Case(
        "max-min space sharing pair",
        "max_min_fairness",
        pair_snapshot(0.8, 0.6),
        2 / 3,
        options=SHARING,
    ),
    Case(
        "water filling space sharing, scale factor 2",
        "water_filling",
        pair_snapshot(0.8, 0.6, scale=2, gpus=2),
        4 / 3,
        options=SHARING,
    ),
    Case(
        "water filling pair pruned",
        "water_filling",
        pair_snapshot(0.3, 0.5),
        0.5,
        options={**SHARING, "prune_pairs": True},
    ),
]
