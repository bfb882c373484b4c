"""Max-min fairness at scale (foundation issue): Gavel-table mixes and all-distinct random jobs.

Baselines, solved in the same process on the same snapshot: HiGHS forced (dual simplex for the
smallest, its interior point otherwise) for random jobs; no merging of identical jobs for the
Gavel mixes. The 100,000-job random rows have no baseline: HiGHS's interior point stalls there.
"""

from __future__ import annotations

from bench.harness import Case
from refdata.synthetic import gavel_snapshot, random_snapshot

GROUP = "max_min_fairness"


def cases() -> list[Case]:
    out = []
    for jobs, types, target in [
        (256, 3, None),
        (2_048, 3, 0.1),
        (20_000, 3, None),
        (100_000, 3, None),
        (256, 8, None),
        (2_048, 8, None),
        (20_000, 8, 3.0),
        (100_000, 8, None),
    ]:
        out.append(
            Case(
                GROUP,
                f"random distinct, {types} types",
                lambda j=jobs, t=types: random_snapshot(j, t, seed=1),
                "max_min_fairness",
                target_seconds=target,
                baseline={"backend": "highs"} if jobs <= 20_000 else None,
            )
        )
    for jobs, target in [(256, None), (2_048, 0.1), (20_000, None), (100_000, 2.0)]:
        out.append(
            Case(
                GROUP,
                "Gavel job types (merged)",
                lambda j=jobs: gavel_snapshot(j, seed=2),
                "max_min_fairness",
                target_seconds=target,
                baseline={"merge_identical": False} if jobs <= 20_000 else None,
            )
        )
    return out
