"""Deadline admission explained (docs/EXPLANATIONS.md): on hand-solved cases every code is told
apart, the capacity rows named are the full slots before the job's deadline, and the earliest
deadline that could be guaranteed now is the hand-counted one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from apportion.solver import Status, solve
from apportion.solver.explain import Reason
from tests.conformance.cases_deadlines import LEASE, cluster, job

POLICY = "deadline_admission"


def explained(data: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    result = solve(data, policy=POLICY, explain=True, options={"mip_gap": 0.0})
    assert result.explanation is not None and result.explanation.available
    return result, {j.id: j for j in result.explanation.jobs}


def test_capacity_lower_value_and_unreachable_are_told_apart() -> None:
    # One node. g (guaranteed before) holds slots 0 and 1 until its deadline 2. c needs the node
    # once by slot 2: only g is there, so capacity. hi (9) and lo (4) want the node once by slot
    # 3: slot 2 is the only one left, hi takes it and lo loses to value. far needs 5 leases by 3:
    # not even alone. be (best-effort) finds no spare GPU: g is due now.
    data = cluster(
        1,
        job("g", 8, 2, (2, 10), guaranteed=True),
        job("c", 8, 1, (2, 5)),
        job("hi", 8, 1, (3, 9)),
        job("lo", 8, 1, (3, 4)),
        job("far", 8, 5, (3, 4)),
        {"id": "be", "scale_factor": 2, "remaining_time": 600},
    )
    result, jobs = explained(data)
    assert result.objective == 19.0
    assert jobs["g"].code == Reason.GRANTED and jobs["g"].detail["slots"] == "0,1"
    assert jobs["hi"].code == Reason.GRANTED and jobs["hi"].detail["slots"] == "2"
    c = jobs["c"]
    assert c.code == Reason.CAPACITY and c.rows == ["capacity[0]", "capacity[1]"]
    assert "earlier guarantees" in c.why
    lo = jobs["lo"]
    assert lo.code == Reason.LOWER_VALUE
    assert lo.rows == ["capacity[0]", "capacity[1]", "capacity[2]"]
    assert lo.detail["taken_by"] == "hi" and lo.detail["taken_value"] == 9.0
    assert "hi" in lo.why
    far = jobs["far"]
    assert far.code == Reason.DEADLINE_UNREACHABLE and far.rows == []
    assert far.detail["earliest_alone"] == 5 * LEASE
    # With g in 0–1 and hi in 2 kept: c and lo get slot 3 (deadline 4), far slots 3–7 (8).
    assert c.detail["earliest_deadline"] == lo.detail["earliest_deadline"] == 4 * LEASE
    assert far.detail["earliest_deadline"] == 8 * LEASE and far.detail["earliest_slots"] == 8
    assert f"{4 * LEASE}" in c.why
    assert jobs["be"].code == Reason.CAPACITY


def test_a_broken_guarantee_says_so_and_when_it_could_be_kept_again() -> None:
    # The cluster shrank: g1 and g2 were both promised the node in slot 0. g1 keeps it, n takes
    # half of slot 1, so g2 could only be promised slot 2 now: deadline 3 leases.
    data = cluster(
        1,
        job("g1", 8, 1, (1, 10), guaranteed=True),
        job("g2", 8, 1, (1, 10), guaranteed=True),
        job("n", 4, 1, (2, 5)),
    )
    result, jobs = explained(data)
    assert result.status is Status.FALLBACK
    g2 = jobs["g2"]
    assert g2.code == Reason.CAPACITY and g2.why.startswith("guarantee broken")
    assert g2.rows == ["capacity[0]"]
    assert g2.detail["earliest_deadline"] == 3 * LEASE


def test_a_guarantee_broken_alone_and_a_job_outbid() -> None:
    # g needs 3 leases by slot 2: unreachable alone. a (4) and b (3) both want slot 0: b loses to
    # a, and could have slot 1 (deadline 2). g could finish by slot 4 with a in slot 0.
    data = cluster(
        1,
        job("g", 8, 3, (2, 10), guaranteed=True),
        job("a", 8, 1, (1, 4)),
        job("b", 8, 1, (1, 3)),
    )
    _, jobs = explained(data)
    g, b = jobs["g"], jobs["b"]
    assert g.code == Reason.DEADLINE_UNREACHABLE and g.why.startswith("guarantee broken")
    assert g.detail["earliest_alone"] == 3 * LEASE and g.detail["earliest_deadline"] == 4 * LEASE
    assert b.code == Reason.LOWER_VALUE and b.rows == ["capacity[0]"]
    assert b.detail["taken_by"] == "a" and b.detail["own_value"] == 3.0
    assert b.detail["earliest_deadline"] == 2 * LEASE


def test_gpus_held_in_pieces_bind_the_chain_size_row() -> None:
    # h holds 6 GPUs on each node through slot 0: 4 GPUs are free, but 2 + 2, so a 4-GPU job due
    # in slot 0 has no consolidated block there (the level-4 row of slot 0 is full, the plain
    # capacity row is not). Slot 1 is empty: deadline 2 leases.
    holder = {
        "id": "h",
        "scale_factor": 12,
        "remaining_time": 1200,
        "placement": {"n0": 6, "n1": 6},
        "held_until": 1200.0,
    }
    _, jobs = explained(cluster(2, holder, job("j", 4, 1, (1, 5))))
    j = jobs["j"]
    assert j.code == Reason.CAPACITY and j.rows == ["capacity_level[0/4]"]
    assert "holders" in j.why
    assert j.detail["earliest_deadline"] == 2 * LEASE
    assert jobs["h"].code == Reason.GRANTED and "holds" in jobs["h"].why


def test_soft_jobs_granted_name_the_option_they_got() -> None:
    data = cluster(
        1,
        job("g", 8, 1, (1, 10), guaranteed=True),
        job("s", 8, 1, (1, 10), (2, 8), job_class="soft"),
    )
    _, jobs = explained(data)
    s = jobs["s"]
    assert s.code == Reason.GRANTED
    assert (s.detail["option"], s.detail["deadline"], s.detail["value"]) == (1, 2 * LEASE, 8.0)


def test_the_solver_report_still_speaks_for_the_answer() -> None:
    # The searches behind the explanation solve models of their own: not counted as the
    # answer's (b's earliest deadline needs a feasibility MILP here: slot 1 is a's).
    data = cluster(1, job("a", 8, 2, (2, 10)), job("b", 8, 1, (2, 5)), job("c", 8, 1, (1, 1)))
    keys = ("solves", "mip_gap", "variables", "constraints", "solver", "detail")
    plain = solve(data, policy=POLICY, options={"mip_gap": 0.0}).solver
    result, _ = explained(data)
    assert {k: getattr(result.solver, k) for k in keys} == {k: getattr(plain, k) for k in keys}


def test_a_plain_solve_builds_and_imports_nothing_for_explanations() -> None:
    code = (
        "import sys\n"
        "from apportion.solver import solve\n"
        "from tests.conformance.cases_deadlines import cluster, job\n"
        "data = cluster(1, job('a', 8, 1, (1, 10)), job('b', 8, 1, (1, 5)))\n"
        "assert solve(data, policy='deadline_admission').explanation is None\n"
        "print(sorted(m for m in sys.modules if m.startswith(('apportion.solver.explain', "
        "'apportion.formulations.deadlines.evidence', 'apportion.formulations.deadlines.earliest'))))\n"
    )
    root = Path(__file__).resolve().parents[3]
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
