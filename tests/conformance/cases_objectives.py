"""Hand-solved instances of the other objectives (FORMULATIONS §2–5): makespan, finish-time
fairness, throughput, throughput per dollar, minimum cost under SLOs, FIFO."""

from __future__ import annotations

import math
from typing import Any

import pytest

from apportion.solver import SolveResult
from tests.allocation_checks import assert_feasible_allocation
from tests.conformance.case import Case


def _feasible(snapshot: dict[str, Any]) -> Any:
    return lambda result: assert_feasible_allocation(result, snapshot)


# slow × 1, fast × 1; a = (1, 3), b = (1, 1.5), 3 steps each. a gives b part of the fast GPU and
# takes slow time instead: M = 15/7 (worked out in tests/formulations/objectives/test_makespan.py).
MAKESPAN = {
    "gpu_types": [{"name": "slow", "count": 1}, {"name": "fast", "count": 1}],
    "jobs": [
        {"id": "a", "throughput": {"slow": 1, "fast": 3}, "steps_remaining": 3},
        {"id": "b", "throughput": {"slow": 1, "fast": 1.5}, "steps_remaining": 3},
    ],
}

# One type, 2 GPUs: 3 + 1 + 2 GPU-seconds of work, the longest job alone needs 3 s: M = 3.
MAKESPAN_GANG = {
    "gpu_types": [{"name": "v100", "count": 2}],
    "jobs": [
        {"id": "a", "throughput": {"v100": 1}, "steps_remaining": 3},
        {"id": "b", "throughput": {"v100": 1}, "steps_remaining": 1},
        {"id": "c", "scale_factor": 2, "throughput": {"v100": 2}, "steps_remaining": 2},
    ],
}

# One GPU. a: 1 step left, started 1 s ago, 0.5 isolated-seconds done → D_a = 2.5; b new → D_b = 2.
# max ρ is least when (1 + 1/x)/2.5 = 1/(2(1 − x)), x = eff_a: x² + 1.25x − 1 = 0.
FTF = {
    "gpu_types": [{"name": "v100", "count": 1}],
    "jobs": [
        {
            "id": "a",
            "throughput": {"v100": 1},
            "steps_remaining": 1,
            "time_since_start": 1,
            "isolated_time_done": 0.5,
        },
        {"id": "b", "throughput": {"v100": 1}, "steps_remaining": 1},
    ],
}
_X = (math.sqrt(5.5625) - 1.25) / 2

# a = (k80 1, v100 4), b = (k80 1, v100 2), one GPU each, prices 0.5 and 2 per GPU-hour.
# Throughput: a → v100, b → k80 = 5. Per dollar (T/p: a = (2, 2), b = (2, 1)): the same, 4.
THROUGHPUT = {
    "gpu_types": [
        {"name": "k80", "count": 1, "price_per_hour": 0.5},
        {"name": "v100", "count": 1, "price_per_hour": 2.0},
    ],
    "jobs": [
        {"id": "a", "throughput": {"k80": 1.0, "v100": 4.0}},
        {"id": "b", "throughput": {"k80": 1.0, "v100": 2.0}},
    ],
}

# k80 costs 1, v100 3. a needs 1 step/s with T = (1, 2), b 1.5 with T = (1, 3): a takes all of
# k80 (cost 1), b half of v100 (1.5): 2.5 per hour.
SLO = {
    "now": 100.0,
    "gpu_types": [
        {"name": "k80", "count": 1, "price_per_hour": 1.0},
        {"name": "v100", "count": 1, "price_per_hour": 3.0},
    ],
    "jobs": [
        {"id": "a", "throughput": {"k80": 1, "v100": 2}, "steps_remaining": 10, "deadline": 110},
        {"id": "b", "throughput": {"k80": 1, "v100": 3}, "steps_remaining": 15, "deadline": 110},
    ],
}

# One GPU at price 1: a and b need 0.5 each, c 0.6; at most {a, b} fit: cost 1, c named.
SLO_OVERSUBSCRIBED = {
    "now": 0.0,
    "gpu_types": [{"name": "v100", "count": 1, "price_per_hour": 1.0}],
    "jobs": [
        {"id": "a", "throughput": {"v100": 1}, "steps_remaining": 5, "deadline": 10},
        {"id": "b", "throughput": {"v100": 1}, "steps_remaining": 5, "deadline": 10},
        {"id": "c", "throughput": {"v100": 1}, "steps_remaining": 6, "deadline": 10},
    ],
}

# k80 × 3, v100 × 1, arrivals j1 < j2 < j3 = j4 (ties by id): j1 → v100, j2 (gang of 2) → k80,
# j3 (gang of 2) fits nowhere; strict: j4 waits (2 running), backfill: j4 → k80 (3 running).
FIFO = {
    "gpu_types": [{"name": "k80", "count": 3}, {"name": "v100", "count": 1}],
    "jobs": [
        {"id": "j4", "arrival_time": 2, "throughput": {"k80": 1}},
        {"id": "j2", "arrival_time": 1, "scale_factor": 2, "throughput": {"k80": 1, "v100": 2}},
        {"id": "j1", "arrival_time": 0, "throughput": {"k80": 1, "v100": 3}},
        {"id": "j3", "arrival_time": 2, "scale_factor": 2, "throughput": {"k80": 1}},
    ],
}


# k80 × 2, v100 × 1, arrivals in id order. j1 → v100. j2 runs only on v100, now full: strict
# stops there (1 running); Gavel's rule sees 2 free k80s, where j2 makes no progress, so j2 waits
# and the queue goes on: j3 → k80 (1 left). j4 (gang of 2) finds no type with 2 free GPUs: the
# queue stops, and j5, which would fit on the last k80, waits behind it (2 running); backfill
# starts j3 and j5 (3 running).
FIFO_GAVEL = {
    "gpu_types": [{"name": "k80", "count": 2}, {"name": "v100", "count": 1}],
    "jobs": [
        {"id": "j1", "arrival_time": 0, "throughput": {"k80": 1, "v100": 3}},
        {"id": "j2", "arrival_time": 1, "throughput": {"v100": 2}},
        {"id": "j3", "arrival_time": 2, "throughput": {"k80": 1}},
        {"id": "j4", "arrival_time": 3, "scale_factor": 2, "throughput": {"k80": 1, "v100": 2}},
        {"id": "j5", "arrival_time": 4, "throughput": {"k80": 1}},
    ],
}

# Gavel's isolated share (FORMULATIONS §3): k80 × 2, v100 × 2, new jobs with 100 steps, so
# ρ_j = iso_j / eff_j. Usable types only: a gets 1/2 of each (iso 1.5), b all of v100 (iso 4),
# and b cannot beat eff 4: ρ* = 1 (the isolated share itself is optimal: no LP, so the case is
# a unit test). Gavel's: (N_k / m) / s_j = 1 of every type, each row (sum 2) divided by 2: 1/2
# of every type for both, k80 included where b makes no progress: iso_b = 2, and a and b both on
# v100 give ρ = max(1.5/2, 2/4) = 0.75.
FTF_ISOLATED = {
    "gpu_types": [{"name": "k80", "count": 2}, {"name": "v100", "count": 2}],
    "jobs": [
        {"id": "a", "throughput": {"k80": 1, "v100": 2}, "steps_remaining": 100},
        {"id": "b", "throughput": {"v100": 4}, "steps_remaining": 100},
    ],
}

# Gavel's isolated share row by row (FORMULATIONS §3), on gangs: v100 × 3, k80 × 3 (C = 6), new
# jobs with 100 steps (ρ_j = iso_j / eff_j), m = 4. a (s = 1; T 2 on v100, 1 on k80): rows
# (3/4, 3/4), sum 1.5, divided by it: (1/2, 1/2), iso_a = 1.5. The gangs (s = 2, T = 1): rows
# (3/8, 3/8), sum 3/4 ≤ 1, kept: iso = 3/4. With a on the v100 for τ of its time (eff 2τ) the
# gangs share the other 6 − τ GPUs, x = (6 − τ)/6 each: ρ_a = 0.75/τ = ρ_g = 4.5/(6 − τ) at
# τ = 6/7, so ρ* = 7/8. (Every row divided by the largest sum gave the gangs 1/4 of each type,
# iso 1/2, and ρ* = 3/4.)
FTF_GANGS = {
    "gpu_types": [{"name": "v100", "count": 3}, {"name": "k80", "count": 3}],
    "jobs": [
        {"id": "a", "throughput": {"v100": 2, "k80": 1}, "steps_remaining": 100},
        *(
            {
                "id": g,
                "scale_factor": 2,
                "throughput": {"v100": 1, "k80": 1},
                "steps_remaining": 100,
            }
            for g in ("b", "c", "d")
        ),
    ],
}


def _slo_missed(names: list[str], snapshot: dict[str, Any]) -> Any:
    def check(result: SolveResult) -> None:
        assert_feasible_allocation(result, snapshot)
        assert result.summary["slo_missed"] == names

    return check


def _rho(values: list[float]) -> Any:
    def check(result: SolveResult) -> None:
        assert_feasible_allocation(result, FTF)
        assert [j.metrics["rho"] for j in result.jobs] == pytest.approx(values, rel=1e-6)

    return check


CASES = [
    Case("makespan 2 jobs × 2 types", "makespan", MAKESPAN, 15 / 7, check=_feasible(MAKESPAN)),
    Case("makespan gang", "makespan", MAKESPAN_GANG, 3.0, check=_feasible(MAKESPAN_GANG)),
    Case(
        "finish-time fairness with history",
        "finish_time_fairness",
        FTF,
        1 / (2 * (1 - _X)),
        check=_rho([1 / (2 * (1 - _X))] * 2),
    ),
    Case(
        "max total throughput", "max_total_throughput", THROUGHPUT, 5.0, check=_feasible(THROUGHPUT)
    ),
    Case(
        "max total normalized throughput",
        "max_total_throughput",
        THROUGHPUT,
        34 / 15,
        options={"normalized": True},
    ),
    Case(
        "throughput per dollar",
        "throughput_per_dollar",
        THROUGHPUT,
        4.0,
        check=_feasible(THROUGHPUT),
    ),
    Case("min cost, SLOs met", "min_cost_slo", SLO, 2.5, check=_slo_missed([], SLO)),
    Case(
        "min cost, SLOs over-subscribed",
        "min_cost_slo",
        SLO_OVERSUBSCRIBED,
        1.0,
        check=_slo_missed(["c"], SLO_OVERSUBSCRIBED),
    ),
    Case("fifo strict", "fifo", FIFO, 2.0, check=_feasible(FIFO)),
    Case("fifo backfill", "fifo", FIFO, 3.0, options={"mode": "backfill"}, check=_feasible(FIFO)),
    Case("fifo strict, Gavel's queue", "fifo", FIFO_GAVEL, 1.0, check=_feasible(FIFO_GAVEL)),
    Case(
        "fifo gavel",
        "fifo",
        FIFO_GAVEL,
        2.0,
        options={"mode": "gavel"},
        check=_feasible(FIFO_GAVEL),
    ),
    Case(
        "fifo backfill, Gavel's queue",
        "fifo",
        FIFO_GAVEL,
        3.0,
        options={"mode": "backfill"},
        check=_feasible(FIFO_GAVEL),
    ),
    Case(
        "finish-time fairness, Gavel's isolated share",
        "finish_time_fairness",
        FTF_ISOLATED,
        0.75,
        options={"isolated_share": "gavel"},
        check=_feasible(FTF_ISOLATED),
    ),
    Case(
        "finish-time fairness, Gavel's isolated share on gangs",
        "finish_time_fairness",
        FTF_GANGS,
        7 / 8,
        options={"isolated_share": "gavel"},
        check=_feasible(FTF_GANGS),
    ),
]
