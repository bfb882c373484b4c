"""Water filling, hierarchical fairness and space sharing (issue: max-min fairness done fully).

Jobs from Gavel's throughput table (scale factors 1/2/4/8 at 70/10/15/5 %, N/4 GPUs of each of
3 types); space sharing with every pair of jobs offered, all scale factors 1. Peak memory is the
process's (rows run in order, so the largest space-sharing row shows its own peak).
"""

from __future__ import annotations

import resource
from typing import Any

from apportion.refdata.space_sharing import gavel_sharing_snapshot, with_entities
from apportion.refdata.synthetic import gavel_snapshot, random_snapshot
from bench.harness import Case

GROUP = "fairness"


def levels(result: Any) -> str:
    s = result.summary
    return f"{s['iterations']} level LPs, {s.get('bottleneck_tests', 0)} bottleneck tests"


def sharing(result: Any) -> str:
    s = result.summary["space_sharing"]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB → GiB
    return (
        f"{s['pairs_offered']:,} pairs, {s['pairs_pruned']:,} pruned, "
        f"{s['pair_columns']} columns; peak {peak:.2f} GiB"
    )


def cases() -> list[Case]:
    out = [
        Case(
            GROUP,
            "water filling, Gavel types",
            lambda: gavel_snapshot(1_024, seed=2),
            "water_filling",
            target_seconds=0.5,
            baseline={"merge_identical": False},
            extra=levels,
        ),
        Case(
            GROUP,
            "water filling, Gavel types",
            lambda: gavel_snapshot(10_000, seed=2),
            "water_filling",
            target_seconds=5.0,
            extra=levels,
        ),
        Case(
            GROUP,
            "water filling, random distinct",
            lambda: random_snapshot(1_024, 3, seed=1),
            "water_filling",
            extra=levels,
        ),
        Case(
            GROUP,
            "hierarchical, 5 entities (fairness)",
            lambda: with_entities(gavel_snapshot(1_024, seed=2)),
            "hierarchical",
            target_seconds=1.0,
            extra=levels,
        ),
        Case(
            GROUP,
            "hierarchical, 5 entities (fairness/fifo)",
            lambda: with_entities(gavel_snapshot(1_024, seed=2), policies=("fairness", "fifo")),
            "hierarchical",
            extra=levels,
        ),
    ]
    for jobs, target in [(256, 1.0), (512, 5.0), (1_024, 60.0)]:
        for policy in ("max_min_fairness", "water_filling"):
            out.append(
                Case(
                    GROUP,
                    f"{policy} + space sharing, all pairs",
                    lambda j=jobs: gavel_sharing_snapshot(j, seed=3),
                    policy,
                    options={"space_sharing": True},
                    target_seconds=target,
                    baseline={"space_sharing": True, "merge_identical": False}
                    if jobs == 256
                    else None,
                    extra=sharing,
                )
            )
    return out
