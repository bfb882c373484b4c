"""Deadline admission (Chronus, issue 5): a Philly-like cluster of 120 × 8 GPUs, 20-minute
leases, 400 SLO jobs with deadlines up to 72 slots ahead (60 % already guaranteed), plus 1,000
best-effort jobs. The note shows the gap reached and the value admitted by the MILP versus
Chronus's greedy packing."""

from __future__ import annotations

from typing import Any

from bench.harness import Case
from refdata.chronus import philly_like_snapshot

GROUP = "deadline_admission"


def note(result: Any) -> str:
    s = result.summary
    gap = "—" if s["mip_gap"] is None else f"{s['mip_gap']:.2%}"
    greedy = s["value_admitted_greedy"]
    gain = (s["value_admitted"] / greedy - 1) if greedy else 0.0
    return (
        f"gap {gap}; value {s['value_admitted']:g} vs greedy {greedy:g} ({gain:+.1%}); "
        f"{s['guaranteed_jobs']} guaranteed, {len(s['guarantees_broken'])} broken; "
        f"idle {s['idle_gpus']}; {result.solver.detail}"
    )


def cases() -> list[Case]:
    out = [
        Case(
            GROUP,
            f"Philly-like 120×8, 400 SLO + 1,000 BE (seed {seed})",
            lambda seed=seed: philly_like_snapshot(seed=seed),
            "deadline_admission",
            target_seconds=5.0,
            extra=note,
        )
        for seed in range(3)
    ]
    out.append(
        Case(
            GROUP,
            "Philly-like 30×8, 100 SLO + 200 BE",
            lambda: philly_like_snapshot(nodes=30, slo_jobs=100, best_effort_jobs=200, seed=0),
            "deadline_admission",
            extra=note,
        )
    )
    return out
