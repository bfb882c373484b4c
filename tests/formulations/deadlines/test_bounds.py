"""The cheap bounds on a rejected job's earliest deadline (`bounds`) against exhaustive search
on one node: the energy bound never rules out a deadline some plan meets, and a repaired plan
is one (every job's leases in its window, no slot over the node)."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from apportion.formulations.deadlines.bounds import energy_admits, repair, windows
from apportion.formulations.deadlines.lease_plan import greedy_plan
from apportion.formulations.deadlines.problem import LeaseProblem, lease_problem
from apportion.solver import parse_snapshot
from apportion.solver.arrays import ClusterArrays
from tests.conformance.cases_deadlines import cluster, job

HORIZON = 8
NODE = 8


def random_instance(rng: np.random.Generator) -> dict[str, Any]:
    jobs = []
    for j in range(5):
        gpus = int(rng.choice([2, 4, 8]))  # sizes that divide the node: counting is exact
        jobs.append(job(f"j{j}", gpus, int(rng.integers(1, 3)), (int(rng.integers(1, 5)), 1.0)))
    return cluster(1, *jobs)


def lease_arrays(data: dict[str, Any]) -> LeaseProblem:
    snapshot = parse_snapshot(data)
    return lease_problem(snapshot, 0.0, HORIZON, ClusterArrays.from_snapshot(snapshot).throughput)


def some_plan_meets(problem: LeaseProblem, spans: dict[int, tuple[int, int]]) -> bool:
    """Exhaustive: every job of `spans` (job → [first, end)) gets its leases inside its span
    with no slot over the node."""
    used = np.zeros(HORIZON, dtype=np.int64)

    def place(order: list[int]) -> bool:
        if not order:
            return True
        k, rest = order[0], order[1:]
        first, end = spans[k]
        for slots in itertools.combinations(range(first, end), int(problem.leases[k])):
            picked = list(slots)
            if (used[picked] + problem.reserve[k] <= NODE).all():
                used[picked] += problem.reserve[k]
                if place(rest):
                    return True
                used[picked] -= problem.reserve[k]
        return False

    return place(sorted(spans, key=lambda k: spans[k][1] - spans[k][0]))


@pytest.mark.parametrize("seed", range(12))
def test_energy_never_rules_out_a_deadline_a_plan_meets_and_repairs_are_plans(seed: int) -> None:
    problem = lease_arrays(random_instance(np.random.default_rng(seed)))
    plan, _ = greedy_plan(problem, np.arange(problem.num_jobs))
    keep = plan.admitted.copy()
    end = windows(problem, plan, keep, HORIZON)
    checked = 0
    for j in np.flatnonzero(~keep).tolist():
        ruled_out = []
        for slots in range(1, HORIZON + 1):
            spans = {
                int(k): (int(problem.first_slot[k]), int(end[k])) for k in np.flatnonzero(keep)
            }
            spans[j] = (int(problem.first_slot[j]), slots)
            feasible = some_plan_meets(problem, spans)
            admits = energy_admits(problem, plan, keep, j, slots, HORIZON)
            assert admits or not feasible, (j, slots)
            ruled_out.append(not admits)
            repaired = repair(problem, plan, keep, j, slots, HORIZON)
            if repaired is not None:
                assert feasible, (j, slots)
                load = problem.reserve @ repaired.slots
                assert (load <= NODE).all()
                for k, (first, stop) in spans.items():
                    held = np.flatnonzero(repaired.slots[k])
                    assert held.size == problem.leases[k], (k, slots)
                    assert ((held >= first) & (held < stop)).all(), (k, slots)
            checked += 1
        # Monotone in the deadline: once a deadline is possible by energy, every later one is.
        assert ruled_out == sorted(ruled_out, reverse=True)
    assert checked > 0 or keep.all()
