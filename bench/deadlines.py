"""Deadline admission (Chronus, issue 5): a Philly-like cluster of 120 × 8 GPUs, 20-minute
leases, 400 SLO jobs with deadlines up to 72 slots ahead (60 % already guaranteed), plus 1,000
best-effort jobs. The note shows the gap reached and the value admitted by the MILP versus
Chronus's greedy packing. Then the simulator's lease-by-lease replay of a contended slice of the
bundled Philly MIX2 sample, asked every lease and every 5 minutes: the share of SLO jobs meeting
a deadline (objective), guarantees broken, and best-effort JCT, with σ adaptive (−1 while
others wait), σ = +1 and the artifact's 10 % safety margin."""

from __future__ import annotations

import time
from typing import Any

from apportion.refdata.chronus import philly_like_snapshot
from apportion.simulator.config import SimConfig
from apportion.simulator.engine import Engine
from apportion.simulator.sources import chronus_sample
from bench.harness import Case, Row

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
    return out + replay_cases()


# ---- the lease-by-lease replay (issue 18, item 3) -------------------------------------------

REPLAY_JOBS, REPLAY_GPUS = 79, 16


def run_replay(case: Case, call_seconds: float, options: dict[str, Any]) -> Row:
    """The simulator's replay, the policy asked every `call_seconds` on 20-minute leases with
    90 s of checkpoint/restore per move. Objective: the share of SLO jobs meeting a deadline."""
    config = SimConfig(
        policy="deadline_admission",
        options={"time_limit": 30.0, **options},
        lease_seconds=1200.0,
        preemption_seconds=90.0,
        call_seconds=call_seconds,
    )
    started = time.perf_counter()
    result = Engine(chronus_sample(REPLAY_JOBS, REPLAY_GPUS), config).run()
    s = result.summary
    return Row(
        case=case,
        jobs=REPLAY_JOBS,
        types=1,
        validate=0.0,
        build=0.0,
        solve=float(s["solver_seconds"]),
        total=time.perf_counter() - started,
        objective=float(s["deadline_met_fraction"]),
        status="done" if s["finished"] == REPLAY_JOBS else "unfinished",
        backend="simulator",
        ratio=None,
        note=(
            f"{s['policy_calls']} calls; guarantees broken {s['guarantees_broken']}, "
            f"guaranteed but missed {s['guaranteed_missed']}; value {s['value_earned']:g}/"
            f"{s['value_possible']:g}; best-effort JCT {s['best_effort_jct_mean'] / 3600:.2f} h"
        ),
    )


def replay_cases() -> list[Case]:
    out = []
    for call_seconds in (1200.0, 300.0):
        for label, options in (
            ("σ adaptive", {}),
            ("σ = +1", {"sigma": 1}),
            ("safety margin 0.1", {"safety_margin": 0.1}),
        ):
            out.append(
                Case(
                    GROUP,
                    f"MIX2 replay {REPLAY_JOBS} jobs on {REPLAY_GPUS} GPUs, asked every "
                    f"{call_seconds / 60:g} min, {label}",
                    lambda: {},
                    "(simulator)",
                    runner=lambda case, c=call_seconds, o=options: run_replay(case, c, o),
                )
            )
    return out
