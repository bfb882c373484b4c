"""Hierarchical fairness (FORMULATIONS §1b): hand-solved fairness and FIFO entities, Gavel's
1:2:3 experiment, an independent slow reference on random snapshots, and input errors."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
import pytest

from apportion.refdata.synthetic import load_gavel_table, random_snapshot
from apportion.solver import InputError, Status, solve
from tests.fairness_reference import Instance, check_result, reference_water_filling


def shares_of(result: object) -> dict[str, float]:
    return {j.id: j.normalized_share for j in result.jobs}  # type: ignore[attr-defined]


# One GPU, T = 1, so prop = 1 and v_j = x_j. Entity A (W = 1) has a1 (w = 1) and a2 (w = 3);
# B (W = 3) has b1. Effective weights: a1 1·1/4, a2 1·3/4, b1 3. One level: x_j = w'_j t with
# Σ x = 4t = 1, so t = 1/4: x = (1/16, 3/16, 3/4). Entity totals 1/4 : 3/4 = W_A : W_B.
FAIRNESS = {
    "gpu_types": [{"name": "v100", "count": 1}],
    "entities": [{"id": "A", "weight": 1}, {"id": "B", "weight": 3}],
    "jobs": [
        {"id": "a1", "entity": "A", "weight": 1, "throughput": {"v100": 1.0}},
        {"id": "a2", "entity": "A", "weight": 3, "throughput": {"v100": 1.0}},
        {"id": "b1", "entity": "B", "throughput": {"v100": 1.0}},
    ],
}

# Three GPUs, T = 1 (v = x ≤ 1). A is FIFO with a2 oldest (arrival 0), then a1 (10), a3 (20);
# B (fairness) has b1. Level 1: a2 and b1 carry weight 1: both reach x = 1 (their time) and
# freeze at 1. Level 2: a1 is A's oldest active job: the third GPU gives it x = 1. Level 3: a3
# finds no GPU left: 0. (Fairness inside A would give a1, a2, a3 two thirds each, b1 one.)
FIFO = {
    "gpu_types": [{"name": "v100", "count": 3}],
    "entities": [{"id": "A", "weight": 1, "policy": "fifo"}, {"id": "B", "weight": 1}],
    "jobs": [
        {"id": "a1", "entity": "A", "arrival_time": 10, "throughput": {"v100": 1.0}},
        {"id": "a2", "entity": "A", "arrival_time": 0, "throughput": {"v100": 1.0}},
        {"id": "a3", "entity": "A", "arrival_time": 20, "throughput": {"v100": 1.0}},
        {"id": "b1", "entity": "B", "throughput": {"v100": 1.0}},
    ],
}


@pytest.mark.parametrize("backend", ["highs", "clarabel"])
def test_fairness_inside_entities_hand_solved(backend: str) -> None:
    result = solve(FAIRNESS, policy="hierarchical", options={"backend": backend})
    assert result.status is Status.OPTIMAL
    alloc = {j.id: j.allocation["v100"] for j in result.jobs}
    assert alloc == pytest.approx({"a1": 1 / 16, "a2": 3 / 16, "b1": 3 / 4}, rel=1e-6)
    weights = {j.id: j.metrics["effective_weight"] for j in result.jobs}
    assert weights == pytest.approx({"a1": 0.25, "a2": 0.75, "b1": 3.0})
    entity_share = {e["id"]: e["share"] for e in result.summary["entities"]}
    assert entity_share == pytest.approx({"A": 0.25, "B": 0.75}, rel=1e-6)


@pytest.mark.parametrize("backend", ["highs", "clarabel"])
def test_fifo_inside_an_entity_hand_solved(backend: str) -> None:
    result = solve(FIFO, policy="hierarchical", options={"backend": backend})
    alloc = {j.id: j.allocation.get("v100", 0.0) for j in result.jobs}
    assert alloc == pytest.approx({"a1": 1.0, "a2": 1.0, "a3": 0.0, "b1": 1.0}, abs=1e-7)
    iteration = {j.id: j.metrics["iteration"] for j in result.jobs}
    assert iteration == {"a2": 1, "b1": 1, "a1": 2, "a3": 3}
    assert "FIFO" in (result.job("a3").reason or "")
    fair = solve(
        {**FIFO, "entities": [{"id": "A", "weight": 1}, {"id": "B", "weight": 1}]},
        policy="hierarchical",
    )
    fair_alloc = {j.id: j.allocation["v100"] for j in fair.jobs}
    assert fair_alloc == pytest.approx({"a1": 2 / 3, "a2": 2 / 3, "a3": 2 / 3, "b1": 1.0})


def gavel_experiment() -> dict:
    """Gavel's hierarchical experiment: entities of weight 1, 2, 3 with six jobs each (the same
    six Gavel job types and in-entity weights), on a cluster small enough that no job saturates."""
    table = load_gavel_table()
    kinds = [jt for jt in table.job_types if jt[1] == 1][:6]
    weights = [1, 2, 1, 1, 3, 1]
    jobs = [
        {
            "id": f"e{e}-{i}",
            "entity": f"e{e}",
            "weight": weights[i],
            "throughput": table.throughput(kind),
        }
        for e in range(3)
        for i, kind in enumerate(kinds)
    ]
    return {
        "gpu_types": [{"name": g, "count": 2} for g in table.gpu_types],
        "entities": [{"id": f"e{e}", "weight": e + 1} for e in range(3)],
        "jobs": jobs,
    }


def test_gavel_entities_get_shares_in_ratio_of_their_weights() -> None:
    snapshot = gavel_experiment()
    result = solve(snapshot, policy="hierarchical")
    assert result.status is Status.OPTIMAL
    v = check_result(result, Instance(snapshot))  # normalized throughput, recomputed
    eff = np.array([j.effective_throughput for j in result.jobs])
    for per_entity in (eff.reshape(3, 6).sum(axis=1), v.reshape(3, 6).sum(axis=1)):
        np.testing.assert_allclose(per_entity / per_entity[0], [1.0, 2.0, 3.0], rtol=1e-6)
    # Inside each entity the job weights are respected: v_j / w_j is the same for all its jobs.
    w = np.array([job["weight"] for job in snapshot["jobs"]], dtype=float)
    per_weight = (v / w).reshape(3, 6)
    np.testing.assert_allclose(per_weight / per_weight[:, :1], 1.0, rtol=1e-6)
    reported = [e["share"] for e in result.summary["entities"]]
    np.testing.assert_allclose(reported, [1 / 6, 2 / 6, 3 / 6], rtol=1e-6)


def with_random_entities(snapshot: dict, seed: int, fifo: bool) -> dict:
    rng = np.random.default_rng(seed)
    jobs = [
        {**job, "entity": f"e{rng.integers(3)}", "arrival_time": float(rng.integers(5))}
        for job in snapshot["jobs"]
    ]
    policies = ["fifo" if fifo and i == 1 else "fairness" for i in range(3)]
    entities = [{"id": f"e{i}", "weight": float(i + 1), "policy": policies[i]} for i in range(3)]
    return {**snapshot, "jobs": jobs, "entities": entities}


def reference_rule(snapshot: dict, inst: Instance) -> Callable[[np.ndarray], np.ndarray]:
    """Effective weights per FORMULATIONS §1b, from the snapshot directly."""
    names = [e["id"] for e in snapshot["entities"]]
    entity = np.array([names.index(job["entity"]) for job in snapshot["jobs"]])
    big_w = np.array([e["weight"] for e in snapshot["entities"]])
    fifo = np.array([e.get("policy") == "fifo" for e in snapshot["entities"]])
    arrival = np.array([job["arrival_time"] for job in snapshot["jobs"]])

    def rule(active: np.ndarray) -> np.ndarray:
        out = np.zeros(active.size)
        for e in range(len(names)):
            members = np.flatnonzero(active & (entity == e))
            if not members.size:
                continue
            if fifo[e]:
                oldest = members[np.lexsort((members, arrival[members]))[0]]
                out[oldest] = big_w[e]
            else:
                out[members] = big_w[e] * inst.w[members] / inst.w[members].sum()
        return out

    return rule


@pytest.mark.parametrize(("seed", "fifo"), [(0, False), (1, False), (2, True), (3, True)])
def test_random_matches_the_slow_reference(seed: int, fifo: bool) -> None:
    snapshot = with_random_entities(random_snapshot(9, 2, seed=seed, gpus_per_type=3), seed, fifo)
    result = solve(snapshot, policy="hierarchical")
    assert result.status is Status.OPTIMAL
    inst = Instance(snapshot)
    v = check_result(result, inst)
    expected = reference_water_filling(inst, reference_rule(snapshot, inst))
    np.testing.assert_allclose(v, expected, rtol=1e-6, atol=1e-8)
    unmerged = solve(snapshot, policy="hierarchical", options={"merge_identical": False})
    np.testing.assert_allclose(check_result(unmerged, inst), expected, rtol=1e-6, atol=1e-8)


def test_unknown_entity_is_rejected_with_its_location() -> None:
    bad = {**FAIRNESS, "jobs": [*FAIRNESS["jobs"], {"id": "x", "entity": "C"}]}
    with pytest.raises(InputError) as caught:
        solve(bad, policy="hierarchical")
    (error,) = caught.value.errors
    assert error.loc == ("snapshot", "jobs", 3, "entity")
    assert "unknown entity 'C'" in error.msg and "'A', 'B'" in error.msg


def test_entities_are_required_by_the_policy() -> None:
    no_list = {k: v for k, v in FAIRNESS.items() if k != "entities"}
    with pytest.raises(InputError, match="needs the snapshot's entities"):
        solve(no_list, policy="hierarchical")
    orphan = {**FAIRNESS, "jobs": [*FAIRNESS["jobs"], {"id": "x", "throughput": {"v100": 1}}]}
    with pytest.raises(InputError) as caught:
        solve(orphan, policy="hierarchical")
    assert caught.value.errors[0].loc == ("snapshot", "jobs", 3, "entity")
    # Other policies ignore entities: the same snapshot solves with max-min fairness.
    assert solve(orphan).status is Status.OPTIMAL


def gavel_entities(jobs: int, seed: int, entities: int = 5) -> dict:
    """The shape of the comparison with the reference system: Gavel's job types at Philly-like
    scale factors, `entities` fairness entities of weight 1–3, N/4 GPUs of each type."""
    rng = np.random.default_rng(seed)
    table = load_gavel_table()
    kinds = table.job_types
    picks = rng.integers(len(kinds), size=jobs)
    gpus = max(jobs // 4, 1)
    return {
        "gpu_types": [{"name": g, "count": gpus} for g in table.gpu_types],
        "entities": [{"id": f"e{e}", "weight": float(rng.integers(1, 4))} for e in range(entities)],
        "jobs": [
            {
                "id": f"j{i}",
                "entity": f"e{rng.integers(entities)}",
                "weight": float(rng.integers(1, 3)),
                "scale_factor": kinds[k][1],
                "throughput": table.throughput(kinds[k]),
            }
            for i, k in enumerate(picks.tolist())
        ],
    }


@pytest.mark.parametrize(("jobs", "seed"), [(32, 0), (32, 1), (64, 2), (128, 3)])
def test_no_job_falls_below_a_level_it_reached(jobs: int, seed: int) -> None:
    snapshot = gavel_entities(jobs, seed)
    result = solve(snapshot, policy="hierarchical")
    assert result.status is Status.OPTIMAL
    frozen = sorted((j.metrics["iteration"], j.metrics["level"]) for j in result.jobs)
    levels = [level for _, level in frozen]
    # The cumulative level at which jobs freeze only grows from one iteration to the next.
    assert all(b >= a * (1 - 1e-9) for a, b in itertools.pairwise(levels))


@pytest.mark.parametrize(("jobs", "seed"), [(32, 0), (64, 2), (128, 3), (256, 4)])
def test_each_entity_gets_its_weight_times_the_level_it_reached(jobs: int, seed: int) -> None:
    """While an entity has an active job, every level adds W_e · t to its total normalized
    throughput (its weight is split over its active jobs), so Σ_{j∈e} v_j = W_e · (the level at
    which its last job froze), and entities active to the end share exactly by weight."""
    snapshot = gavel_entities(jobs, seed)
    result = solve(snapshot, policy="hierarchical")
    assert result.status is Status.OPTIMAL
    inst = Instance(snapshot)
    v = check_result(result, inst)
    owner = np.array([job["entity"] for job in snapshot["jobs"]])
    last = max(j.metrics["level"] for j in result.jobs)
    for entity in snapshot["entities"]:
        members = np.flatnonzero(owner == entity["id"])
        if not members.size:
            continue
        reached = max(result.jobs[j].metrics["level"] for j in members)
        assert v[members].sum() == pytest.approx(entity["weight"] * reached, rel=1e-6)
        assert reached <= last * (1 + 1e-9)


@pytest.mark.parametrize("gpus", [4, 5])
def test_gavel_experiment_keeps_one_two_three_when_jobs_saturate(gpus: int) -> None:
    """Gavel's 1:2:3 experiment on a roomier cluster: several jobs saturate (run all the time)
    at early levels; their siblings take their part of the entity weight from then on, and the
    entities still share exactly 1:2:3."""
    snapshot = gavel_experiment()
    snapshot["gpu_types"] = [{**g, "count": gpus} for g in snapshot["gpu_types"]]
    result = solve(snapshot, policy="hierarchical")
    assert result.status is Status.OPTIMAL
    saturated = [j for j in result.jobs if sum(j.allocation.values()) > 1 - 1e-9]
    assert len(saturated) >= 3
    assert max(j.metrics["iteration"] for j in result.jobs) >= 3
    v = check_result(result, Instance(snapshot))
    totals = v.reshape(3, 6).sum(axis=1)
    np.testing.assert_allclose(totals / totals[0], [1.0, 2.0, 3.0], rtol=1e-6)


# The reproduction of a FIFO defect: two FIFO entities of equal weight, one GPU of each type,
# T = 1 (prop = 1/2, v = 2x). Level 1: the heads j0 (e0) and j2 (e1) share `a`, x = 1/2, v = 1,
# and freeze (`a` is full). Level 2: the next heads are j1 (`a` only: it cannot rise, so it
# freezes at v = 0) and j4 (`b`, idle: it can). Only j1 freezes (FORMULATIONS §1b); level 3:
# e0's head is now j3 (`b`), and j3 and j4 rise together, `b` split 1/2 : 1/2 (v = 1 each).
# Each entity gets v = 2: shares 1/2 : 1/2, as the weights. (Freezing j4 with j1 left `b` to
# j3: j4 got nothing, shares 3/4 : 1/4.)
FIFO_HEADS = {
    "gpu_types": [{"name": "a", "count": 1}, {"name": "b", "count": 1}],
    "entities": [
        {"id": "e0", "weight": 1, "policy": "fifo"},
        {"id": "e1", "weight": 1, "policy": "fifo"},
    ],
    "jobs": [
        {"id": "j0", "entity": "e0", "arrival_time": 0, "throughput": {"a": 1.0}},
        {"id": "j1", "entity": "e0", "arrival_time": 1, "throughput": {"a": 1.0}},
        {"id": "j3", "entity": "e0", "arrival_time": 2, "throughput": {"b": 1.0}},
        {"id": "j2", "entity": "e1", "arrival_time": 0, "throughput": {"a": 1.0}},
        {"id": "j4", "entity": "e1", "arrival_time": 1, "throughput": {"b": 1.0}},
    ],
}


@pytest.mark.parametrize("backend", ["highs", "clarabel"])
def test_fifo_heads_that_can_rise_are_not_frozen(backend: str) -> None:
    result = solve(FIFO_HEADS, policy="hierarchical", options={"backend": backend})
    assert result.status is Status.OPTIMAL
    alloc = {j.id: (j.allocation.get("a", 0.0), j.allocation.get("b", 0.0)) for j in result.jobs}
    expected = {"j0": (0.5, 0), "j1": (0, 0), "j3": (0, 0.5), "j2": (0.5, 0), "j4": (0, 0.5)}
    for job, pair in expected.items():
        assert alloc[job] == pytest.approx(pair, abs=1e-7)
    inst = Instance(FIFO_HEADS)
    v = check_result(result, inst)
    reference = reference_water_filling(inst, reference_rule(FIFO_HEADS, inst))
    np.testing.assert_allclose(v, reference, rtol=1e-6, atol=1e-7)
    shares = {e["id"]: e["share"] for e in result.summary["entities"]}
    assert shares == pytest.approx({"e0": 0.5, "e1": 0.5}, rel=1e-6)
    assert {j.id: j.metrics["iteration"] for j in result.jobs} == {
        "j0": 1,
        "j2": 1,
        "j1": 2,
        "j3": 3,
        "j4": 3,
    }


def test_a_fifo_job_left_waiting_is_told_the_truth() -> None:
    """j4 runs now, so it has no reason; j1 gets nothing because `a`, the only type it can run
    on, is in full use by the time its older sibling has been served: its reason says so, and
    the returned allocation bears it out."""
    result = solve(FIFO_HEADS, policy="hierarchical")
    assert result.job("j4").reason is None
    reason = result.job("j1").reason or ""
    assert "FIFO" in reason and "(a)" in reason and "full use" in reason
    used = {g.name: g.used for g in result.gpu_types}
    assert used["a"] == pytest.approx(1.0, abs=1e-9)


def fifo_queues(seed: int) -> dict:
    """Two FIFO entities on two or three types of one or two GPUs, jobs usable on one or two
    types each, arriving one by one: heads that cannot rise next to heads that can are common
    (the defect above hit 16 of 300 of these)."""
    rng = np.random.default_rng(seed)
    names = "abc"[: int(rng.integers(2, 4))]
    jobs = []
    for i in range(int(rng.integers(4, 8))):
        usable = rng.random(len(names)) < 0.3
        usable[rng.integers(len(names))] |= not usable.any()
        speed = np.where(usable, rng.choice([1.0, 2.0], size=len(names)), 0.0)
        jobs.append(
            {
                "id": f"j{i}",
                "entity": f"e{rng.integers(2)}",
                "arrival_time": float(i),
                "throughput": {n: float(x) for n, x in zip(names, speed, strict=True) if x > 0},
            }
        )
    return {
        "gpu_types": [{"name": n, "count": int(rng.integers(1, 3))} for n in names],
        "entities": [
            {"id": "e0", "weight": 1.0, "policy": "fifo"},
            {"id": "e1", "weight": float(rng.choice([1, 2])), "policy": "fifo"},
        ],
        "jobs": jobs,
    }


@pytest.mark.parametrize("seed", range(40))
def test_no_fifo_job_is_frozen_while_it_could_rise(seed: int) -> None:
    """Property: on small random FIFO queues the shares are the slow reference's, which freezes
    a job only when one LP shows it cannot rise with everyone keeping what they have."""
    snapshot = fifo_queues(seed)
    result = solve(snapshot, policy="hierarchical")
    assert result.status is Status.OPTIMAL
    inst = Instance(snapshot)
    v = check_result(result, inst)
    expected = reference_water_filling(inst, reference_rule(snapshot, inst))
    np.testing.assert_allclose(v, expected, rtol=1e-6, atol=1e-7 * float(expected.max()))
