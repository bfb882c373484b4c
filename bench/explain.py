"""What `explain=true` costs (issue 19): the same snapshot solved with and without the
explanation in one process; the ratio column is explained / plain (target ≤ 1.2 for max-min).

Each side is timed as the best of `REPEATS` solves after one untimed plain solve, so neither
pays the policy's first import or the validators' first use."""

from __future__ import annotations

from typing import Any

from apportion.refdata.synthetic import gavel_snapshot, random_snapshot
from apportion.solver import solve
from bench.harness import Case, Row
from bench.placement import _snapshot as placement_snapshot

GROUP = "explain"


def _note(result: object) -> str:
    explanation = getattr(result, "explanation", None)
    if explanation is None:
        return ""
    priced = explanation.price_stage or "no prices"
    return f"available {explanation.available}, prices: {priced}"


REPEATS = 2


def _best(snapshot: Any, case: Case, options: dict[str, Any]) -> Any:
    runs = [solve(snapshot, policy=case.policy, options=options) for _ in range(REPEATS)]
    return min(runs, key=lambda r: r.solver.total_seconds)


def _explained_vs_plain(case: Case) -> Row:
    snapshot = case.make()
    plain_options = case.baseline or {}
    solve(snapshot, policy=case.policy, options=plain_options)
    explained = _best(snapshot, case, case.options)
    plain = _best(snapshot, case, plain_options)
    report = explained.solver
    return Row(
        case=case,
        jobs=len(snapshot.get("jobs", [])),
        types=len(explained.gpu_types),
        validate=report.validate_seconds,
        build=report.build_seconds,
        solve=report.solve_seconds,
        total=report.total_seconds,
        objective=explained.objective,
        status=explained.status.value,
        backend=f"{report.backend}/{report.solver}",
        ratio=report.total_seconds / plain.solver.total_seconds,
        note=_note(explained),
    )


def cases() -> list[Case]:
    out = []
    for name, jobs, make in [
        ("max-min, random distinct, 3 types", 2_048, lambda: random_snapshot(2_048, 3, seed=1)),
        ("max-min, random distinct, 3 types", 20_000, lambda: random_snapshot(20_000, 3, seed=1)),
        (
            "max-min, over-subscribed (N = 128)",
            2_048,
            lambda: random_snapshot(2_048, 3, seed=1, gpus_per_type=128),
        ),
        ("max-min, Gavel job types (merged)", 20_000, lambda: gavel_snapshot(20_000, seed=2)),
    ]:
        out.append(
            Case(
                GROUP,
                f"{name}, {jobs:,} jobs",
                make,
                "max_min_fairness",
                {"explain": True},
                baseline={},
                runner=_explained_vs_plain,
            )
        )
    out.append(
        Case(
            GROUP,
            "contention placement MILP, DeepShare 32×8",
            lambda: placement_snapshot(32, 64, 24),
            "contention_placement",
            {"w1": 0.5, "time_limit": 10.0, "explain": True},
            baseline={"w1": 0.5, "time_limit": 10.0},
            runner=_explained_vs_plain,
        )
    )
    return out
