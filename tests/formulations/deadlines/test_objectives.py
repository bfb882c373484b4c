"""What admission maximizes (FORMULATIONS §6, "objectives"), a last lease that ends early, and a
promised deadline kept: hand-solved cases."""

from __future__ import annotations

import pytest

from apportion.solver import InputError, solve
from tests.conformance.cases_deadlines import LEASE, cluster, job
from tests.deadline_checks import assert_valid_answer

POLICY = "deadline_admission"


def guaranteed(result: object) -> set[str]:
    return {j.id for j in result.jobs if j.metrics.get("guaranteed")}  # type: ignore[attr-defined]


def test_value_ranks_jobs_by_their_values_satisfaction_counts_each_job_once() -> None:
    # One node, one slot before every deadline: vip (8 GPUs, value 100) or a and b (4 GPUs
    # each, value 10). Value: 100 > 20. Satisfaction (no price): 1 < 2 jobs met.
    data = cluster(1, job("vip", 8, 1, (1, 100)), job("a", 4, 1, (1, 10)), job("b", 4, 1, (1, 10)))
    by_value = solve(data, policy=POLICY, options={"objective": "value"})
    assert guaranteed(by_value) == {"vip"} and by_value.objective == 100.0
    satisfied = solve(data, policy=POLICY, options={"objective": "satisfaction", "lease_price": 0})
    assert guaranteed(satisfied) == {"a", "b"} and satisfied.objective == 2.0
    assert satisfied.summary["satisfaction_admitted"] == 2.0


def test_a_guarantee_costs_the_price_of_the_gpu_leases_it_reserves() -> None:
    # Two nodes. long: 8 GPUs × 3 leases = 24 GPU-leases, soft (10 by 4 leases, 5 by 5);
    # short: 1 GPU × 2 leases; best-effort jobs ask for 48 GPUs more: 57 asked of 16, the
    # pressure is full (ρ = 1). At 0.05 per GPU-lease of its best value, long nets
    # 1 − 1.2 < 0 at its best option (0.5 − 1.2 at its other): not offered; short nets
    # 1 − 0.1 = 0.9. At 0.04, long nets 1 − 0.96 = 0.04 > 0: admitted.
    crowd = [{"id": f"be{i}", "scale_factor": 16, "remaining_time": 9000} for i in range(3)]
    data = cluster(2, job("long", 8, 3, (4, 10), (5, 5)), job("short", 1, 2, (3, 10)), *crowd)
    priced = solve(data, policy=POLICY, options={"lease_price": 0.05})
    assert guaranteed(priced) == {"short"}
    assert priced.objective == pytest.approx(0.9)
    cheaper = solve(data, policy=POLICY, options={"lease_price": 0.04})
    assert guaranteed(cheaper) == {"long", "short"}
    assert cheaper.objective == pytest.approx(0.04 + 0.92)
    assert_valid_answer(cheaper, data)


def test_the_price_follows_the_pressure_on_the_cluster() -> None:
    # The same jobs with one best-effort job: 25 GPUs asked of 16, ρ = 25/16 − 1 = 0.5625, so
    # long costs 0.05 · 0.5625 · 24 = 0.675 and nets 0.325: admitted. Alone (9 of 16: ρ = 0)
    # a guarantee costs nothing.
    crowd = {"id": "be", "scale_factor": 16, "remaining_time": 9000}
    data = cluster(2, job("long", 8, 3, (4, 10), (5, 5)), job("short", 1, 2, (3, 10)), crowd)
    result = solve(data, policy=POLICY, options={"lease_price": 0.05})
    assert guaranteed(result) == {"long", "short"}
    assert result.objective == pytest.approx((1 - 0.675) + (1 - 0.05 * 0.5625 * 2))


def test_a_last_lease_that_ends_before_the_deadline_counts() -> None:
    # 1,500 s of work on 20-minute leases: one whole lease and 300 s of a second. Due at
    # 2,500 s: slot 1 starts at 1,200 and would end at 2,400; its tail (300 s) starting at
    # 2,400 ends at 2,700 > 2,500 … but slots 0 and 1 leave the tail in slot 1, ending at 1,500.
    # Due at 1,450 s: one lease (slot 0) and the tail from 1,200 to 1,500 is late: declined.
    on_time = cluster(
        1, {"id": "t", "remaining_time": 1500, "deadlines": [{"time": 1500, "value": 1}]}
    )
    result = solve(on_time, policy=POLICY)
    assert guaranteed(result) == {"t"} and result.job("t").metrics["slots"] == "0,1"
    late = cluster(
        1, {"id": "t", "remaining_time": 1500, "deadlines": [{"time": 1450, "value": 1}]}
    )
    assert guaranteed(solve(late, policy=POLICY)) == set()


def test_a_guaranteed_job_keeps_the_option_it_was_promised() -> None:
    # g was promised its first option (slot 1, value 10); n (value 10) could only take slot 0.
    # By value, moving g to its second option (slot 2, value 8) admits n: 18 > 10. Promised
    # its first deadline, g keeps it and n is declined.
    g = job("g", 8, 1, (1, 10), (2, 8), guaranteed=True)
    n = job("n", 8, 1, (1, 10))
    free = solve(cluster(1, g, n), policy=POLICY, options={"objective": "value"})
    assert guaranteed(free) == {"g", "n"} and free.job("g").metrics["deadline"] == 2 * LEASE
    kept = solve(
        cluster(1, {**g, "guaranteed_deadline": LEASE}, n),
        policy=POLICY,
        options={"objective": "value"},
    )
    assert guaranteed(kept) == {"g"} and kept.job("g").metrics["deadline"] == LEASE


def test_a_promised_deadline_needs_a_guarantee_and_a_real_option() -> None:
    data = cluster(1, {**job("g", 8, 1, (2, 10)), "guaranteed_deadline": LEASE})
    with pytest.raises(InputError) as caught:
        solve(data, policy=POLICY)
    assert caught.value.errors[0].loc == ("snapshot", "jobs", 0, "guaranteed_deadline")
