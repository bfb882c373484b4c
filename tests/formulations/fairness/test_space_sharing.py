"""Space sharing (FORMULATIONS §1c) for max-min fairness and water filling: hand-solved pairs,
exact pruning, mixed scale factors, merged pair classes, and leximin with pairs."""

from __future__ import annotations

import numpy as np
import pytest

from apportion.refdata.space_sharing import gavel_pairs, gavel_sharing_snapshot
from apportion.refdata.synthetic import gavel_snapshot, load_gavel_table, random_snapshot
from apportion.solver import InputError, Status, solve
from tests.fairness_reference import Instance, check_result, leximin_gap

POLICIES = ["max_min_fairness", "water_filling"]
SHARING = {"space_sharing": True}


def pair_snapshot(ta: float, tb: float, scale: int = 1, gpus: int = 1) -> dict:
    return {
        "gpu_types": [{"name": "v100", "count": gpus}],
        "jobs": [
            {"id": "a", "scale_factor": scale, "throughput": {"v100": 1.0}},
            {"id": "b", "scale_factor": scale, "throughput": {"v100": 1.0}},
        ],
        "job_pairs": [{"a": "a", "b": "b", "throughput": {"v100": [ta, tb]}}],
    }


# One GPU, T = 1 alone (prop = 1, u = eff). Alone: x_a + x_b ≤ 1 gives 1/2 each. Together a runs
# at 0.8 and b at 0.6 for time y: u_a = x_a + 0.8y, u_b = x_b + 0.6y, x_a + x_b + y ≤ 1. With
# x_a = 0: 0.8y = x_b + 0.6y and x_b + y = 1 give x_b = 1/6, y = 5/6, u = 2/3 (dual p = 1/3,
# q = 2/3 on the shares, r = 2/3 on the GPU certifies it).
@pytest.mark.parametrize("policy", POLICIES)
def test_pair_hand_solved(policy: str) -> None:
    snapshot = pair_snapshot(0.8, 0.6)
    assert solve(snapshot, policy=policy).objective == pytest.approx(0.5)
    result = solve(snapshot, policy=policy, options=SHARING)
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(2 / 3, rel=1e-9)
    assert result.summary["pair_allocations"] == [
        {"a": "a", "b": "b", "allocation": {"v100": pytest.approx(5 / 6)}}
    ]
    assert result.job("b").allocation == {"v100": pytest.approx(1 / 6)}
    assert result.job("a").metrics["shared_time"] == pytest.approx(5 / 6)
    assert result.gpu_types[0].used == pytest.approx(1.0)
    check_result(result, Instance(snapshot, space_sharing=True))


# Scale factor 2 on 2 GPUs: u = 2·eff (prop = 1). The pair occupies 2 GPUs, not 4, so the
# single-GPU answer doubles: 2 · 2/3 = 4/3 (alone: 2 · 1/2 = 1).
@pytest.mark.parametrize("policy", POLICIES)
def test_pair_occupies_its_scale_factor_once(policy: str) -> None:
    snapshot = pair_snapshot(0.8, 0.6, scale=2, gpus=2)
    result = solve(snapshot, policy=policy, options=SHARING)
    assert result.objective == pytest.approx(4 / 3, rel=1e-9)
    assert result.gpu_types[0].used == pytest.approx(2.0)


# r_a + r_b = 0.3 + 0.5 ≤ 1: time-slicing a and b alone does at least as well, so the pair is
# pruned (and reported); without pruning the LP may use it but cannot do better than 1/2.
@pytest.mark.parametrize("policy", POLICIES)
def test_pruning_is_exact_and_reported(policy: str) -> None:
    snapshot = pair_snapshot(0.3, 0.5)
    pruned = solve(snapshot, policy=policy, options=SHARING)
    assert pruned.summary["space_sharing"]["pairs_pruned"] == 1
    assert pruned.summary["space_sharing"]["pair_columns"] == 0
    kept = solve(snapshot, policy=policy, options={**SHARING, "prune_pairs": False})
    assert kept.summary["space_sharing"]["pair_columns"] == 1
    assert pruned.objective == pytest.approx(0.5) and kept.objective == pytest.approx(0.5)


@pytest.mark.parametrize("policy", POLICIES)
def test_mixed_scale_factors_are_ignored_with_a_warning(policy: str) -> None:
    snapshot = pair_snapshot(0.8, 0.6, gpus=2)
    snapshot["jobs"][1]["scale_factor"] = 2
    plain = solve(snapshot, policy=policy)
    result = solve(snapshot, policy=policy, options=SHARING)
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(plain.objective)
    assert "different scale factors" in result.warnings[0] and "a+b" in result.warnings[0]
    assert result.summary["space_sharing"]["pairs_ignored_mixed_scale"] == 1


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(
    "snapshot",
    [random_snapshot(12, 3, seed=5, gpus_per_type=4), gavel_snapshot(30, seed=1)],
    ids=["random", "gavel"],
)
def test_no_pairs_offered_equals_the_plain_policy(policy: str, snapshot: dict) -> None:
    plain = solve(snapshot, policy=policy)
    shared = solve(snapshot, policy=policy, options=SHARING)
    assert shared.objective == pytest.approx(plain.objective, rel=1e-7)
    if policy == "water_filling":  # the leximin vector is unique
        np.testing.assert_allclose(
            [j.normalized_share for j in shared.jobs],
            [j.normalized_share for j in plain.jobs],
            rtol=1e-7,
        )


GAVEL_PAIRS = gavel_sharing_snapshot(10, seed=7, gpus_per_type=2)


def test_gavel_pairs_water_filling_is_leximin_optimal() -> None:
    result = solve(GAVEL_PAIRS, policy="water_filling", options=SHARING)
    assert result.status is Status.OPTIMAL
    assert result.summary["pair_allocations"], "sharing pays off on this instance"
    inst = Instance(GAVEL_PAIRS, space_sharing=True)
    u = check_result(result, inst) / inst.w
    assert leximin_gap(inst, u, inst.w) < 1e-6
    assert result.objective == pytest.approx(
        solve(GAVEL_PAIRS, options=SHARING).objective, rel=1e-7
    )


@pytest.mark.parametrize("policy", POLICIES)
def test_merging_and_pruning_do_not_change_the_answer(policy: str) -> None:
    # Twelve jobs of three Gavel types (four each): identical jobs merge into three groups and
    # their pairs into classes of interchangeable pairs.
    table = load_gavel_table()
    kinds = [jt for jt in table.job_types if jt[1] == 1][3:6]
    jobs = [
        {
            "id": f"j{i}",
            "throughput": table.throughput(kinds[i % 3]),
            "workload_class": kinds[i % 3][0],
        }
        for i in range(12)
    ]
    snapshot = {
        "gpu_types": [{"name": g, "count": 2} for g in table.gpu_types],
        "jobs": jobs,
        "job_pairs": gavel_pairs(jobs, table),
    }
    inst = Instance(snapshot, space_sharing=True)
    answers = []
    for options in (
        {},
        {"merge_identical": False},
        {"prune_pairs": False},
        {"merge_identical": False, "prune_pairs": False},
    ):
        result = solve(snapshot, policy=policy, options={**SHARING, **options})
        v = check_result(result, inst)
        answers.append((result.objective, np.sort(v)))
        if not options:
            assert result.solver.merged_groups == 3
    for objective, v in answers[1:]:
        assert objective == pytest.approx(answers[0][0], rel=1e-7)
        if policy == "water_filling":
            np.testing.assert_allclose(v, answers[0][1], rtol=1e-6)


def test_partial_offers_split_merged_jobs() -> None:
    # Four identical jobs, but only a0 may share with the others: a0 is not interchangeable
    # with a1..a3 any more, and the merged answer must equal the unmerged one.
    snapshot = {
        "gpu_types": [{"name": "v100", "count": 2}],
        "jobs": [{"id": f"a{i}", "throughput": {"v100": 1.0}} for i in range(4)],
        "job_pairs": [
            {"a": "a0", "b": f"a{i}", "throughput": {"v100": [0.9, 0.7]}} for i in range(1, 4)
        ],
    }
    merged = solve(snapshot, policy="water_filling", options=SHARING)
    alone = solve(snapshot, policy="water_filling", options={**SHARING, "merge_identical": False})
    inst = Instance(snapshot, space_sharing=True)
    np.testing.assert_allclose(check_result(merged, inst), check_result(alone, inst), rtol=1e-6)
    assert merged.objective > 0.5  # sharing beats 2 GPUs over 4 jobs


def test_space_sharing_needs_measured_throughputs() -> None:
    with pytest.raises(InputError) as caught:
        solve(
            pair_snapshot(0.8, 0.6),
            policy="water_filling",
            options={**SHARING, "heterogeneity_aware": False},
        )
    assert caught.value.errors[0].loc == ("options", "space_sharing")


def test_hierarchical_shares_gpus_too() -> None:
    # a and b in entities of equal weight: the same single level as water filling, 2/3 each.
    snapshot = pair_snapshot(0.8, 0.6)
    snapshot["entities"] = [{"id": "A"}, {"id": "B"}]
    snapshot["jobs"][0]["entity"], snapshot["jobs"][1]["entity"] = "A", "B"
    result = solve(snapshot, policy="hierarchical", options=SHARING)
    assert result.objective == pytest.approx(2 / 3, rel=1e-9)
    check_result(result, Instance(snapshot, space_sharing=True))
