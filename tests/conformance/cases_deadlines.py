"""Hand-solved deadline admission instances (FORMULATIONS §6). Value admitted is the objective
(`objective=value`: Chronus's, exact for the decision in hand).

All on 20-minute leases (1,200 s) from now = 0: slot t is [1200t, 1200(t+1)), a deadline d
leaves ⌊d/1200⌋ slots, a job with E seconds left needs ⌈E/1200⌉ leases.
"""

from __future__ import annotations

from typing import Any

from apportion.solver import SolveResult
from tests.conformance.case import Case

LEASE = 1200


def cluster(nodes: int, *jobs: dict[str, Any]) -> dict[str, Any]:
    return {
        "gpu_types": [{"name": "v100", "count": 8 * nodes}],
        "nodes": [{"id": f"n{i}", "gpus": 8} for i in range(nodes)],
        "lease_seconds": LEASE,
        "now": 0,
        "jobs": list(jobs),
    }


def job(
    job_id: str, gpus: int, leases: int, *options: tuple[int, float], **extra: Any
) -> dict[str, Any]:
    """`options` as (deadline in slots, value)."""
    return {
        "id": job_id,
        "scale_factor": gpus,
        "remaining_time": leases * LEASE,
        "deadlines": [{"time": slots * LEASE, "value": value} for slots, value in options],
        **extra,
    }


# One 8-GPU node, one slot before both deadlines: a (value 10) and b (value 6) both need all
# 8 GPUs for that slot. Only one fits; the optimum admits a: value 10.
ONE_SLOT = cluster(1, job("a", 8, 1, (1, 10)), job("b", 8, 1, (1, 6)))

# g (guaranteed) needs the node in slot 0 (deadline: 1 slot). s is soft: slot 0 worth 10, or by
# the end of slot 1 worth 8. Slot 0 is g's, so s takes its later option: 10 + 8 = 18.
SOFT_LATER = cluster(
    1,
    job("g", 8, 1, (1, 10), guaranteed=True),
    job("s", 8, 1, (1, 10), (2, 8), job_class="soft"),
)

# Two slots, one node. big: 8 GPUs × 1 lease, value 10; p and q: 4 GPUs × 2 leases, 6 each.
# big takes a whole slot, leaving one slot for p and q, which need two: big + anything = 10.
# p + q share both slots (4 + 4 GPUs each): 12. The joint optimum is 12; Chronus's greedy
# (largest value first) admits big alone: 10.
JOINT = cluster(1, job("big", 8, 1, (2, 10)), job("p", 4, 2, (2, 6)), job("q", 4, 2, (2, 6)))

# Round-up: a 3-GPU job reserves 4, so two 3-GPU jobs and a 2-GPU job (4 + 4 + 2 = 10 > 8) do
# not all fit one node in one slot, though 3 + 3 + 2 = 8 GPUs would by count. Values 5, 5, 3:
# the two 3-GPU jobs (4 + 4 = 8): 10.
ROUND_UP = cluster(1, job("x", 3, 1, (1, 5)), job("y", 3, 1, (1, 5)), job("z", 2, 1, (1, 3)))


def admitted(*ids: str, summary: dict[str, Any] | None = None) -> Any:
    def check(result: SolveResult) -> None:
        got = {j.id for j in result.jobs if j.metrics.get("guaranteed")}
        assert got == set(ids), got
        for key, value in (summary or {}).items():
            assert result.summary[key] == value, (key, result.summary[key])

    return check


def soft_later(result: SolveResult) -> None:
    admitted("g", "s")(result)
    s = result.job("s")
    assert s.metrics["deadline"] == 2 * LEASE and s.metrics["slots"] == "1"
    assert not s.metrics["runs_now"] and result.job("g").placement == {"n0": 8}


#: Exact answers are asked for: the policy's default gap (1 %) is called `feasible` unless closed.
VALUE = {"objective": "value", "mip_gap": 0.0}

CASES = [
    Case(
        "deadlines: two jobs, one slot",
        "deadline_admission",
        ONE_SLOT,
        10.0,
        VALUE,
        check=admitted("a"),
    ),
    Case(
        "deadlines: soft job takes its later option",
        "deadline_admission",
        SOFT_LATER,
        18.0,
        VALUE,
        check=soft_later,
    ),
    Case(
        "deadlines: joint admission beats greedy",
        "deadline_admission",
        JOINT,
        12.0,
        VALUE,
        check=admitted("p", "q", summary={"value_admitted_greedy": 10.0}),
    ),
    Case(
        "deadlines: round-up reserves 4 for 3",
        "deadline_admission",
        ROUND_UP,
        10.0,
        VALUE,
        check=admitted("x", "y"),
    ),
]
