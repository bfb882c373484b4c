"""The Gavel drop-in, called exactly as Gavel's scheduler calls a policy: nested dicts keyed by
job id objects (shaped like Gavel's `JobIdPair`: hashable, integer ids, pairs of two) and
worker types. Each answer is checked against apportion's own solve of the same cluster written
as a snapshot by hand, and against the constraints an allocation must keep."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest

from apportion.adapters.gavel import (
    GAVEL_NAMES,
    FinishTimeFairness,
    GavelPolicy,
    MaxMinFairness,
    MaxMinFairnessSpaceSharing,
    MinMakespan,
    WaterFilling,
    WaterFillingSpaceSharing,
    get_policy,
)
from apportion.solver import InputError, SolveResult, solve

TOL = 1e-7


class JobId:
    """A job id as Gavel's scheduler makes them: one integer, or a pair of them (smaller
    first), hashable and equal by value, `is_pair()` and `singletons()`."""

    def __init__(self, first: int, second: int | None = None) -> None:
        pair = (first, second) if second is None else (min(first, second), max(first, second))
        self._ids: tuple[int, int | None] = pair

    def __getitem__(self, index: int) -> int | None:
        return self._ids[index]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JobId) and self._ids == other._ids

    def __hash__(self) -> int:
        return hash(self._ids)

    def __repr__(self) -> str:
        first, second = self._ids
        return str(first) if second is None else f"({first}, {second})"

    def is_pair(self) -> bool:
        return self._ids[1] is not None

    def singletons(self) -> tuple[JobId, ...]:
        first, second = self._ids
        return (self,) if second is None else (JobId(first), JobId(second))


CLUSTER = {"v100": 2, "p100": 3, "k80": 4}
SCALE = [1, 2, 1, 1, 4, 1, 1, 2]
WEIGHTS = [1.0, 1.0, 2.0, 1.0, 1.0, 0.5, 1.0, 1.0]


def throughputs() -> dict[Any, dict[str, Any]]:
    """Eight jobs; job 6 cannot run on K80s (Gavel passes a 0 there)."""
    rng = np.random.default_rng(7)
    table = rng.uniform(1.0, 10.0, size=(len(SCALE), len(CLUSTER))).round(3)
    table[6, 2] = 0.0
    # NumPy floats, as Gavel's scheduler stores them.
    return {JobId(j): dict(zip(CLUSTER, row, strict=True)) for j, row in enumerate(table)}


def per_job(values: list[Any]) -> dict[Any, Any]:
    return {JobId(j): v for j, v in enumerate(values)}


def snapshot_of(thr: Mapping[Any, Mapping[str, Any]], **fields: dict[Any, Any]) -> dict[str, Any]:
    """The same cluster written as a snapshot by hand, job `i` named `j{i}`."""
    jobs = []
    for key, row in thr.items():
        if key.is_pair():
            continue
        job = {"id": f"j{key[0]}", "throughput": {k: float(v) for k, v in row.items() if v > 0}}
        job.update({name: values[key] for name, values in fields.items()})
        jobs.append(job)
    pairs = [
        {
            "a": f"j{key[0]}",
            "b": f"j{key[1]}",
            "throughput": {k: [float(x) for x in v] for k, v in row.items() if max(v) > 0},
        }
        for key, row in thr.items()
        if key.is_pair()
    ]
    gpu_types = [{"name": k, "count": n} for k, n in CLUSTER.items()]
    return {"gpu_types": gpu_types, "jobs": jobs, **({"job_pairs": pairs} if pairs else {})}


def effective(alloc: Mapping[Any, Mapping[str, float]], thr: Mapping[Any, Any]) -> dict[int, float]:
    """Σ_k T_jk X_jk per job id, pairs counted for both members."""
    eff: dict[int, float] = {}
    for key, row in alloc.items():
        members = key.singletons()
        for position, member in enumerate(members):
            t = thr[key]
            gain = sum((t[k][position] if len(members) == 2 else t[k]) * x for k, x in row.items())
            eff[member[0]] = eff.get(member[0], 0.0) + gain
    return eff


def assert_feasible(alloc: Mapping[Any, Mapping[str, float]], thr: Mapping[Any, Any]) -> None:
    """Every key and worker type answered; fractions in [0, 1]; each job busy at most all the
    time; each type's GPUs not over-used; no time where a job cannot run."""
    assert set(alloc) == set(thr)
    busy: dict[int, float] = {}
    used = dict.fromkeys(CLUSTER, 0.0)
    for key, row in alloc.items():
        assert set(row) == set(CLUSTER)
        members = key.singletons()
        for k, x in row.items():
            assert -TOL <= x <= 1 + TOL
            used[k] += SCALE[members[0][0]] * x
            if len(members) == 1 and (thr[key][k] == 0 or SCALE[members[0][0]] > CLUSTER[k]):
                assert x <= TOL
        for member in members:
            busy[member[0]] = busy.get(member[0], 0.0) + sum(row.values())
    assert max(busy.values()) <= 1 + 1e-6
    assert all(used[k] <= CLUSTER[k] + 1e-6 for k in CLUSTER)


def min_share(alloc: Mapping[Any, Mapping[str, float]], thr: Mapping[Any, Any]) -> float:
    """The max-min objective of an allocation: min_j s_j·eff_j / (w_j·prop_j)."""
    eff, total = effective(alloc, thr), sum(CLUSTER.values())
    shares = []
    for j, e in eff.items():
        prop = sum(float(thr[JobId(j)][k]) * n for k, n in CLUSTER.items()) / total
        shares.append(SCALE[j] * e / (WEIGHTS[j] * prop))
    return min(shares)


def same_allocation(alloc: Mapping[Any, Mapping[str, float]], own: SolveResult) -> None:
    for job in own.jobs:
        row = alloc[JobId(int(job.id[1:]))]
        assert row == pytest.approx({k: job.allocation.get(k, 0.0) for k in CLUSTER}, abs=1e-7)


def test_max_min_fairness_matches_apportion() -> None:
    thr = throughputs()
    policy = MaxMinFairness(solver="ECOS")
    alloc = policy.get_allocation(thr, per_job(SCALE), per_job(WEIGHTS), CLUSTER)
    own = solve(snapshot_of(thr, scale_factor=per_job(SCALE), weight=per_job(WEIGHTS)))
    assert_feasible(alloc, thr)
    assert min_share(alloc, thr) == pytest.approx(own.objective, rel=1e-6)
    same_allocation(alloc, own)
    assert all(type(k) is JobId for k in alloc)  # the caller's own key objects


def test_agnostic_max_min_fairness_matches_apportion() -> None:
    thr = throughputs()
    policy = MaxMinFairness(agnostic=True)
    alloc = policy.get_allocation(thr, per_job(SCALE), per_job(WEIGHTS), CLUSTER)
    doc = snapshot_of(thr, scale_factor=per_job(SCALE), weight=per_job(WEIGHTS))
    own = solve(doc, options={"heterogeneity_aware": False})
    assert policy.name == "MaxMinFairness"
    assert_feasible(alloc, thr)
    assert policy.last_result is not None
    assert policy.last_result.objective == pytest.approx(own.objective, rel=1e-9)
    same_allocation(alloc, own)


def test_water_filling_matches_apportion_and_is_at_least_max_min() -> None:
    thr = throughputs()
    alloc = WaterFilling().get_allocation(thr, per_job(SCALE), per_job(WEIGHTS), CLUSTER)
    doc = snapshot_of(thr, scale_factor=per_job(SCALE), weight=per_job(WEIGHTS))
    own = solve(doc, policy="water_filling")
    assert_feasible(alloc, thr)
    assert min_share(alloc, thr) == pytest.approx(own.objective, rel=1e-6)
    assert min_share(alloc, thr) >= (solve(doc).objective or 0.0) * (1 - 1e-6)
    same_allocation(alloc, own)


def test_min_makespan_matches_apportion() -> None:
    thr = throughputs()
    steps = per_job([1000 * (j + 1) for j in range(len(SCALE))])
    policy = MinMakespan()
    alloc = policy.get_allocation(thr, per_job(SCALE), steps, CLUSTER)
    own = solve(snapshot_of(thr, scale_factor=per_job(SCALE), steps_remaining=steps), "makespan")
    assert policy.name.startswith("MinTotalDuration")
    assert_feasible(alloc, thr)
    makespan = max(steps[JobId(j)] / e for j, e in effective(alloc, thr).items())
    assert makespan == pytest.approx(own.objective, rel=1e-6)


def isolated_throughput(thr: Mapping[Any, Any], steps: Mapping[Any, float]) -> dict[int, float]:
    """FORMULATIONS §3 by hand: 1/m of every type a job can use (it runs there and its gang
    fits), per GPU of its gang, the row scaled to at most 1; m the jobs with steps left."""
    active = [j for j in range(len(SCALE)) if steps[JobId(j)] > 0]
    out = {}
    for j in active:
        row = thr[JobId(j)]
        usable = [k for k in CLUSTER if row[k] > 0 and SCALE[j] <= CLUSTER[k]]
        share = {k: CLUSTER[k] / len(active) / SCALE[j] for k in usable}
        scale = max(sum(share.values()), 1.0)
        out[j] = sum(float(row[k]) * x / scale for k, x in share.items())
    return out


def test_finish_time_fairness_keeps_gavels_history() -> None:
    """Three rounds: each adds the steps done since the last, over the last isolated
    throughput, to the job's isolated time (Gavel's cumulative isolated time); the answer then
    matches apportion solving the snapshot with that history."""
    thr, policy = throughputs(), FinishTimeFairness()
    steps = per_job([5000.0 + 700 * j for j in range(len(SCALE))])
    history = dict.fromkeys(range(len(SCALE)), 0.0)
    for now in (0.0, 360.0, 720.0):
        since = per_job([now + 30 * j for j in range(len(SCALE))])
        alloc = policy.get_allocation(thr, per_job(SCALE), per_job(WEIGHTS), since, steps, CLUSTER)
        assert_feasible(alloc, thr)
        assert policy.isolated_time_done == pytest.approx(per_job(list(history.values())))
        done = per_job(list(history.values()))
        doc = snapshot_of(
            thr,
            scale_factor=per_job(SCALE),
            weight=per_job(WEIGHTS),
            steps_remaining=steps,
            time_since_start=since,
            isolated_time_done=done,
        )
        own = solve(doc, policy="finish_time_fairness")
        eff = effective(alloc, thr)
        rate = isolated_throughput(thr, steps)
        rho = [
            (since[JobId(j)] + steps[JobId(j)] / eff[j]) / (history[j] + steps[JobId(j)] / rate[j])
            for j in eff
        ]
        assert max(rho) == pytest.approx(own.objective, rel=1e-6)
        # The round runs: each job does 360 s of its allocation's work.
        after: dict[Any, Any] = {JobId(j): max(steps[JobId(j)] - 360 * eff[j], 1.0) for j in eff}
        for j in eff:
            history[j] += (steps[JobId(j)] - after[JobId(j)]) / rate[j]
        steps = after
    assert min(history.values()) > 0


def test_finish_time_fairness_forgets_jobs_that_left() -> None:
    """Gavel passes every job in the system: one missing has finished, and a call without jobs
    means none is left (the next call starts afresh)."""
    thr, policy = throughputs(), FinishTimeFairness()
    args = (per_job(SCALE), per_job(WEIGHTS), per_job([0.0] * 8))
    policy.get_allocation(thr, *args, per_job([1000.0] * 8), CLUSTER)
    fewer = {k: v for k, v in thr.items() if k != JobId(3)}
    policy.get_allocation(fewer, *args, per_job([900.0] * 8), CLUSTER)
    assert JobId(3) not in policy.isolated_time_done
    assert min(policy.isolated_time_done.values()) > 0
    assert policy.get_allocation({}, *args, {}, CLUSTER) == {}
    assert policy.last_result is None
    policy.get_allocation(thr, *args, per_job([800.0] * 8), CLUSTER)
    assert set(policy.isolated_time_done.values()) == {0.0}


def paired_throughputs() -> dict[Any, dict[str, Any]]:
    """Single jobs plus pairs keyed by pair ids (each member's throughput when co-located, in
    the order of `singletons()`); pair (0, 2) cannot share K80s."""
    thr = throughputs()
    for a, b in [(0, 2), (3, 5), (6, 7), (1, 7)]:
        row = {k: [0.7 * thr[JobId(a)][k], 0.6 * thr[JobId(b)][k]] for k in CLUSTER}
        thr[JobId(b, a)] = row
    thr[JobId(0, 2)]["k80"] = [0.0, 0.0]
    return thr


@pytest.mark.parametrize(
    ("kind", "policy"),
    [(MaxMinFairnessSpaceSharing, "max_min_fairness"), (WaterFillingSpaceSharing, "water_filling")],
)
def test_space_sharing_pairs_come_back_under_the_callers_pair_keys(
    kind: type[GavelPolicy], policy: str
) -> None:
    thr = paired_throughputs()
    adapter = kind()
    alloc = adapter.get_allocation(thr, per_job(SCALE), per_job(WEIGHTS), CLUSTER)
    doc = snapshot_of(thr, scale_factor=per_job(SCALE), weight=per_job(WEIGHTS))
    own = solve(doc, policy=policy, options={"space_sharing": True})
    assert "Packing" in adapter.name
    assert_feasible(alloc, thr)
    assert min_share(alloc, thr) == pytest.approx(own.objective, rel=1e-6)
    used = {(p["a"], p["b"]): p["allocation"] for p in own.summary["pair_allocations"]}
    assert used, "the case is meant to use pairs"
    for (a, b), fractions in used.items():
        row = alloc[JobId(int(a[1:]), int(b[1:]))]
        assert row == pytest.approx({k: fractions.get(k, 0.0) for k in CLUSTER}, abs=1e-7)
    assert alloc[JobId(0, 2)]["k80"] == 0.0


def test_tuple_pairs_are_recognised_too() -> None:
    thr: dict[Any, dict[str, Any]] = {"a": {"v100": 4.0}, "b": {"v100": 3.0}}
    thr[("a", "b")] = {"v100": [3.5, 2.8]}
    alloc = MaxMinFairnessSpaceSharing().get_allocation(
        thr, {"a": 1, "b": 1}, {"a": 1.0, "b": 1.0}, {"v100": 1}
    )
    assert set(alloc) == {"a", "b", ("a", "b")}
    own = solve(
        {
            "gpu_types": [{"name": "v100", "count": 1}],
            "jobs": [
                {"id": "a", "throughput": {"v100": 4.0}},
                {"id": "b", "throughput": {"v100": 3.0}},
            ],
            "job_pairs": [{"a": "a", "b": "b", "throughput": {"v100": [3.5, 2.8]}}],
        },
        options={"space_sharing": True},
    )
    assert alloc[("a", "b")]["v100"] == pytest.approx(
        own.summary["pair_allocations"][0]["allocation"]["v100"]
    )
    assert alloc[("a", "b")]["v100"] > 0.9


def test_entities_make_it_hierarchical() -> None:
    thr = throughputs()
    teams = {"team-a": [JobId(j) for j in range(3)], "team-b": [JobId(j) for j in range(3, 8)]}
    weights: dict[Any, Any] = {**per_job(WEIGHTS), "team-a": 1.0, "team-b": 3.0}
    policy = WaterFilling()
    alloc = policy.get_allocation(
        thr, per_job(SCALE), weights, CLUSTER, entity_to_job_mapping=teams
    )
    owner: dict[Any, Any] = {JobId(j): ("a" if j < 3 else "b") for j in range(8)}
    doc = snapshot_of(thr, scale_factor=per_job(SCALE), weight=per_job(WEIGHTS), entity=owner)
    doc["entities"] = [{"id": "a", "weight": 1.0}, {"id": "b", "weight": 3.0}]
    own = solve(doc, policy="hierarchical")
    assert_feasible(alloc, thr)
    assert policy.last_result is not None
    assert policy.last_result.objective == pytest.approx(own.objective, rel=1e-9)
    same_allocation(alloc, own)


def test_bad_input_names_the_argument_and_the_callers_key() -> None:
    thr = throughputs()
    thr[JobId(2)]["v100"] = -1.0
    thr[JobId(4)]["k80"] = "fast"
    scale = per_job(SCALE)
    del scale[JobId(5)]
    scale[JobId(1)] = 1.5
    with pytest.raises(InputError) as caught:
        MaxMinFairness().get_allocation(thr, scale, per_job(WEIGHTS), CLUSTER)
    locs = {e.loc for e in caught.value.errors}
    assert locs == {("throughputs", "4", "k80"), ("scale_factors", "5"), ("scale_factors", "1")}
    del thr[JobId(4)]
    with pytest.raises(InputError) as solver_side:
        MaxMinFairness().get_allocation(thr, per_job(SCALE), per_job(WEIGHTS), CLUSTER)
    assert [e.loc for e in solver_side.value.errors] == [("throughputs", "2", "v100")]


def test_pairs_need_a_space_sharing_policy() -> None:
    with pytest.raises(InputError, match="does not share GPUs"):
        MaxMinFairness().get_allocation(
            paired_throughputs(), per_job(SCALE), per_job(WEIGHTS), CLUSTER
        )


def test_gavel_names_and_dispatch_prefixes() -> None:
    assert isinstance(get_policy("max_min_fairness_perf"), MaxMinFairness)
    assert get_policy("max_min_fairness").name == "MaxMinFairness"
    prefixes = {
        "finish_time_fairness_perf": "FinishTimeFairness",
        "min_total_duration": "MinTotalDuration",
    }
    for gavel_name, prefix in prefixes.items():
        assert get_policy(gavel_name, solver="ECOS").name.startswith(prefix)
    assert all(
        get_policy(n).name.startswith("MaxMinFairness") for n in GAVEL_NAMES if "max_min" in n
    )
    with pytest.raises(ValueError, match="no apportion adapter"):
        get_policy("fifo")
    assert MaxMinFairness().get_allocation({}, {}, {}, CLUSTER) == {}
