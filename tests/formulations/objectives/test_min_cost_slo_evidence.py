"""Min cost with SLOs explained (docs/EXPLANATIONS.md): every code told apart on hand-solved
cases, and an SLO given up called `lower_value` exactly when brute force over the SLO sets that
include it finds less value than the best set."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.optimize import linprog

from apportion.solver import solve
from apportion.solver.explain import Reason

POLICY = "min_cost_slo"


def gpu(name: str, count: int, price: float) -> dict[str, Any]:
    return {"name": name, "count": count, "price_per_hour": price}


def slo(job_id: str, throughput: dict[str, float], steps: float, **extra: Any) -> dict[str, Any]:
    """Deadline 20 s from now (0): it needs steps / 20 steps/s."""
    return {
        "id": job_id,
        "throughput": throughput,
        "steps_remaining": steps,
        "deadline": 20,
        **extra,
    }


def explained(data: dict[str, Any], maximize: str = "count") -> tuple[Any, dict[str, Any]]:
    result = solve(data, policy=POLICY, explain=True, options={"maximize": maximize})
    assert result.explanation is not None and result.explanation.available
    return result, {j.id: j for j in result.explanation.jobs}


def test_every_code_is_told_apart() -> None:
    # One v100 (price 2). a and b need half of it each; big needs all of it: meeting big gives up
    # both, so it loses to value. late needs 1.5 steps/s, more than its 1 alone. none runs
    # nowhere, wide is a gang wider than the type, be asks for no deadline.
    data = {
        "now": 0,
        "gpu_types": [gpu("v100", 1, 2.0)],
        "jobs": [
            slo("a", {"v100": 1}, 10),
            slo("b", {"v100": 1}, 10),
            slo("big", {"v100": 1}, 20),
            slo("late", {"v100": 1}, 30),
            slo("none", {}, 1),
            slo("wide", {"v100": 1}, 1, scale_factor=2),
            {"id": "be", "throughput": {"v100": 1}},
        ],
    }
    result, jobs = explained(data)
    for met in ("a", "b"):
        assert jobs[met].code == Reason.GRANTED
        # Half the v100's time at 2 per GPU-hour, read back from the allocation.
        cost = 2.0 * result.job(met).allocation["v100"]
        assert jobs[met].detail["cost_per_hour"] == pytest.approx(cost) == pytest.approx(1.0)
    big = jobs["big"]
    assert big.code == Reason.LOWER_VALUE and big.rows == ["capacity[v100]"]
    assert big.detail["best_value"] == 2 and big.detail["best_value_meeting_it"] == 1
    assert big.detail["displaced_jobs"] == "a,b"
    assert jobs["late"].code == Reason.DEADLINE_UNREACHABLE
    assert jobs["late"].detail["earliest_alone"] == pytest.approx(30.0)
    assert jobs["none"].code == Reason.NO_THROUGHPUT
    assert jobs["wide"].code == Reason.GANG_DOES_NOT_FIT
    assert jobs["be"].code == Reason.NO_DEADLINE


def test_a_tie_lost_to_capacity_not_to_value() -> None:
    # x and y each need 0.6 of the one v100: either can be met, not both. The one given up could
    # replace the other at the same count: capacity, with 0.4 steps/s left for it.
    data = {
        "now": 0,
        "gpu_types": [gpu("v100", 1, 1.0)],
        "jobs": [slo("x", {"v100": 1}, 12), slo("y", {"v100": 1}, 12)],
    }
    result, jobs = explained(data)
    lost = [j for j in jobs.values() if j.code != Reason.GRANTED]
    assert len(lost) == 1 and result.summary["slo_met"] == 1
    (given_up,) = lost
    assert given_up.code == Reason.CAPACITY and given_up.rows == ["capacity[v100]"]
    assert given_up.detail["reachable_on_idle"] == pytest.approx(0.4)
    assert given_up.detail["best_value_meeting_it"] == given_up.detail["best_value"] == 1


def test_the_weight_mode_weighs_what_meeting_it_would_cost() -> None:
    # big (weight 3) needs the whole v100, a and b (weight 1 each) half of it: by count a and b
    # win, by weight big does, and each of a, b would then bring 2 in place of 3.
    data = {
        "now": 0,
        "gpu_types": [gpu("v100", 1, 1.0)],
        "jobs": [
            slo("a", {"v100": 1}, 10),
            slo("b", {"v100": 1}, 10),
            slo("big", {"v100": 1}, 20, weight=3),
        ],
    }
    _, by_count = explained(data)
    assert by_count["big"].code == Reason.LOWER_VALUE
    _, by_weight = explained(data, maximize="weight")
    assert by_weight["big"].code == Reason.GRANTED
    for small in ("a", "b"):
        assert by_weight[small].code == Reason.LOWER_VALUE
        assert by_weight[small].detail["best_value_meeting_it"] == pytest.approx(2.0)
        assert by_weight[small].detail["displaced_jobs"] == "big"


def test_a_passed_deadline_is_unreachable() -> None:
    data = {
        "now": 30,
        "gpu_types": [gpu("v100", 1, 1.0)],
        "jobs": [slo("gone", {"v100": 1}, 10), {"id": "be", "throughput": {"v100": 1}}],
    }
    _, jobs = explained(data)
    assert jobs["gone"].code == Reason.DEADLINE_UNREACHABLE
    assert jobs["gone"].detail["required_throughput"] is None


def test_the_solver_report_still_speaks_for_the_answer() -> None:
    # The explanation's MILPs (one per SLO given up) are not counted as the answer's.
    data = {
        "now": 0,
        "gpu_types": [gpu("v100", 1, 1.0)],
        "jobs": [slo("x", {"v100": 1}, 12), slo("y", {"v100": 1}, 12)],
    }
    keys = ("solves", "mip_gap", "variables", "constraints", "solver", "detail")
    plain = solve(data, policy=POLICY).solver
    result, _ = explained(data)
    assert {k: getattr(result.solver, k) for k in keys} == {k: getattr(plain, k) for k in keys}


def test_a_plain_solve_builds_and_imports_nothing_for_explanations() -> None:
    code = (
        "import sys\n"
        "from apportion.solver import solve\n"
        "data = {'now': 0, 'gpu_types': [{'name': 'g', 'count': 1, 'price_per_hour': 1.0}],\n"
        "        'jobs': [{'id': i, 'throughput': {'g': 1}, 'steps_remaining': 10,\n"
        "                  'deadline': 15} for i in 'ab']}\n"
        "assert solve(data, policy='min_cost_slo').summary['slo_met'] == 1\n"
        "print(sorted(m for m in sys.modules if m.startswith(('apportion.solver.explain', "
        "'apportion.formulations.objectives.min_cost_slo_evidence'))))\n"
    )
    root = Path(__file__).resolve().parents[3]
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


# ---- against brute force --------------------------------------------------------------------


def random_case(rng: np.random.Generator) -> dict[str, Any]:
    types = [gpu("k80", 2, 1.0), gpu("v100", 1, 3.0)]
    jobs = []
    for j in range(5):
        rate = {"k80": float(rng.integers(1, 3)), "v100": float(rng.integers(2, 5))}
        scale = int(rng.choice([1, 1, 2]))
        steps = float(rng.integers(20, 80))
        jobs.append(slo(f"j{j}", rate, steps, scale_factor=scale, weight=float(rng.integers(1, 4))))
    return {"now": 0, "gpu_types": types, "jobs": jobs}


def fits(data: dict[str, Any], chosen: tuple[int, ...]) -> bool:
    """Whether the SLOs of `chosen` can all be met: a feasibility LP of their own over X (jobs ×
    types): T_i·X_i ≥ d_i, Σ_k X_ik ≤ 1, Σ_i s_i X_ik ≤ N_k, X = 0 where the gang is too wide."""
    if not chosen:
        return True
    names = [g["name"] for g in data["gpu_types"]]
    count = np.array([g["count"] for g in data["gpu_types"]], dtype=float)
    jobs = [data["jobs"][j] for j in chosen]
    n, k = len(jobs), len(names)
    rate = np.array([[job["throughput"][g] for g in names] for job in jobs])
    scale = np.array([float(job.get("scale_factor", 1)) for job in jobs])
    need = np.array([job["steps_remaining"] / (job["deadline"] - data["now"]) for job in jobs])
    per_job = np.kron(np.eye(n), np.ones(k))  # row i sums job i's columns
    a_ub = np.vstack([-per_job * rate.reshape(-1), per_job, np.kron(scale, np.eye(k))])
    b_ub = np.concatenate([-need, np.ones(n), count])
    wide = (scale[:, None] > count[None, :]).reshape(-1)
    bounds = [(0.0, 0.0 if w else None) for w in wide]
    return bool(linprog(np.zeros(n * k), A_ub=a_ub, b_ub=b_ub, bounds=bounds).status == 0)


@pytest.mark.parametrize(
    ("seed", "maximize"), [(s, m) for s in range(8) for m in ("count", "weight")]
)
def test_lower_value_exactly_when_every_set_with_it_is_worth_less(seed: int, maximize: str) -> None:
    data = random_case(np.random.default_rng(seed))
    _, jobs = explained(data, maximize)
    value = [1.0 if maximize == "count" else job["weight"] for job in data["jobs"]]
    sets = [c for r in range(6) for c in itertools.combinations(range(5), r) if fits(data, c)]
    best = max(sum(value[j] for j in c) for c in sets)
    for j, job in enumerate(data["jobs"]):
        explanation = jobs[job["id"]]
        if explanation.code == Reason.GRANTED:
            continue
        with_it = max((sum(value[i] for i in c) for c in sets if j in c), default=None)
        if with_it is None:  # no set with it fits: it cannot be met even alone
            assert explanation.code == Reason.DEADLINE_UNREACHABLE
            continue
        assert explanation.detail["best_value"] == pytest.approx(best)
        assert explanation.detail["best_value_meeting_it"] == pytest.approx(with_it)
        expected = Reason.LOWER_VALUE if with_it < best - 1e-9 else Reason.CAPACITY
        assert explanation.code == expected, job["id"]
