"""Deadline admission (Chronus).

One decision at Philly scale: 120 × 8 GPUs, 20-minute leases, 400 SLO jobs with deadlines up to
72 slots ahead (60 % already guaranteed) and 1,000 best-effort jobs, by Chronus's value: the gap
reached and the value admitted against Chronus's greedy packing; then the same snapshot asked to
explain itself, whose earliest deadline for each declined job must be exact or tightly bounded
within the request's 3 s.

Over time (`simulator.deadline_study`): the bundled Philly MIX1, MIX2 and SLO samples on 16, 24
and 48 GPUs, every policy under the same lease mechanics and Chronus's restart overhead, in one
sweep. One row per (trace, cluster, policy): satisfaction as Chronus's schedule_summary computes
it (objective), first deadlines met, best-effort JCT (and its ratio to SRTF's), guarantees
broken, the 95th percentile of a policy call; then per (trace, cluster) whether the claims hold,
and the admission p95 at 48 GPUs on MIX2 against its 1 s target. At the small size (default) the
first 80 jobs of MIX2 on 16 GPUs, and deadline admission alone on every MIX2 job at 48 GPUs (the
1 s target); `APPORTION_FULL=1` runs the full sweep (every bundled job).
"""

from __future__ import annotations

import os
import time
from functools import cache
from typing import Any

import pandas as pd

from apportion.refdata.chronus import philly_like_snapshot
from apportion.simulator import deadline_study as study
from apportion.simulator import run_sweep
from apportion.simulator.sweep import run_one
from apportion.solver import solve
from bench.harness import Case, Row

GROUP = "deadline_admission"
FULL = os.environ.get("APPORTION_FULL") == "1"
VALUE = {"objective": "value"}  # one decision, Chronus's own objective


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


def earliest_row(case: Case) -> Row:
    """The declined jobs' earliest deadlines, explained within the request's time limit."""
    snapshot = case.make()
    started = time.perf_counter()
    result = solve(snapshot, policy=case.policy, options=case.options, explain=True)
    total = time.perf_counter() - started
    found = [e.detail for e in (result.explanation.jobs if result.explanation else [])]
    found = [d for d in found if "earliest_computed" in d]
    exact = sum(bool(d["earliest_computed"]) for d in found)
    widths = [
        (d["earliest_at_most"] - d["earliest_at_least"]) / snapshot["lease_seconds"]
        for d in found
        if not d["earliest_computed"] and d["earliest_at_most"] is not None
    ]
    shown = "; open: " + ", ".join(f"{w:g}" for w in widths) + " slots" if widths else ""
    return Row(
        case=case,
        jobs=len(snapshot["jobs"]),
        types=1,
        validate=result.solver.validate_seconds,
        build=result.solver.build_seconds,
        solve=result.solver.solve_seconds,
        total=total,
        objective=float(exact),
        status=result.status.value,
        backend=f"{result.solver.backend}/{result.solver.solver}",
        ratio=None,
        note=f"declined {len(found)}, earliest deadline exact for {exact}{shown}",
    )


def cases() -> list[Case]:
    out = [
        Case(
            GROUP,
            f"Philly-like 120×8, 400 SLO + 1,000 BE (seed {seed})",
            lambda seed=seed: philly_like_snapshot(seed=seed),
            "deadline_admission",
            options=VALUE,
            target_seconds=5.0,
            extra=note,
        )
        for seed in range(3)
    ]
    out += [
        Case(
            GROUP,
            f"Philly-like 120×8 explained: earliest deadlines (seed {seed})",
            lambda seed=seed: philly_like_snapshot(seed=seed),
            "deadline_admission",
            options={**VALUE, "time_limit": 3.0},
            target_seconds=4.0,
            runner=earliest_row,
        )
        for seed in range(3)
    ]
    out.append(
        Case(
            GROUP,
            "Philly-like 30×8, 100 SLO + 200 BE",
            lambda: philly_like_snapshot(nodes=30, slo_jobs=100, best_effort_jobs=200, seed=0),
            "deadline_admission",
            options=VALUE,
            extra=note,
        )
    )
    # At full size the sweep has this run among its rows.
    single = [] if FULL else [admission_p95_case()]
    return [*out, *single, *study_cases()]


# ---- over time: the study, every policy under the same mechanics ----------------------------


def study_size() -> tuple[dict[str, Any], tuple[int, ...], int | None]:
    if FULL:
        return dict(study.TRACES), (16, 24, 48), None
    return {"MIX2": study.TRACES["MIX2"]}, (16,), 80


@cache
def sweep() -> tuple[pd.DataFrame, pd.DataFrame, float]:
    """The study's table and claims, run once for every row (one sweep)."""
    traces, gpus, jobs = study_size()
    runs = study.runs(traces, gpus, jobs)
    done = run_sweep(runs)
    frame = study.table(runs, done.results, traces)
    return frame, study.targets(frame), done.wall_seconds


def study_row(case: Case, trace: str, gpus: int, policy: str) -> Row:
    frame, targets, wall = sweep()
    mine = frame.query("trace == @trace and gpus == @gpus and policy == @policy").iloc[0]
    srtf = frame.query("trace == @trace and gpus == @gpus and policy == 'srtf'").iloc[0]
    claim = targets.query("trace == @trace and gpus == @gpus").iloc[0]
    jct = mine["best_effort_jct_h"]
    be = (
        "no BE jobs"
        if pd.isna(jct)
        else f"BE JCT {jct:.2f} h ({jct / srtf['best_effort_jct_h']:.2f}× SRTF)"
    )
    verdict = ""
    if policy == study.OURS:
        verdict = (
            f"; vs best baseline ({claim['best_baseline']}) {claim['satisfaction_margin']:+.4f}, "
            f"first met vs EDF {claim['first_met_margin_vs_edf']:+.4f}: "
            f"{'claims met' if claim['met'] else 'CLAIM MISSED'}"
        )
    note = (
        f"first met {mine['first_deadline_met']:.4f}; {be}; broken "
        f"{mine['guarantees_broken']}, missed {mine['guaranteed_missed']}; "
        f"{mine['moves']} moves{verdict} (sweep {wall:.0f} s)"
    )
    return _study_row(case, mine, note)


def admission_p95_row(case: Case) -> Row:
    """Deadline admission asked as a deployment would (every arrival, completion and lease
    boundary) on every bundled MIX2 job at 48 GPUs: the 95th percentile of a call's seconds."""
    traces = {"MIX2": study.TRACES["MIX2"]}
    (run,) = study.runs(traces, (48,), None, study.VARIANTS[:1])
    started = time.perf_counter()
    result = run_one(run)
    wall = time.perf_counter() - started
    mine = study.table([run], [result], traces).iloc[0]
    note = (
        f"{mine['calls']} calls, max {result.calls['seconds'].max():.3f} s; broken "
        f"{mine['guarantees_broken']}, missed {mine['guaranteed_missed']} (run {wall:.0f} s)"
    )
    return _study_row(case, mine, note)


def _study_row(case: Case, mine: pd.Series, note: str) -> Row:
    """A bench row from one run's line of the study's table: the p95 of a policy call as its
    time, satisfaction as its objective."""
    return Row(
        case=case,
        jobs=int(mine["calls"]),
        types=1,
        validate=0.0,
        build=0.0,
        solve=float(mine["call_p95_s"]),
        total=float(mine["call_p95_s"]),
        objective=float(mine["satisfaction"]),
        status="done" if mine["unfinished"] == 0 else "unfinished",
        backend="simulator",
        ratio=None,
        note=note,
    )


def admission_p95_case() -> Case:
    return Case(
        GROUP,
        "MIX2 (every job) on 48 GPUs: deadline_admission on events (call p95 s)",
        dict,
        "(simulator)",
        target_seconds=1.0,
        runner=admission_p95_row,
    )


def study_cases() -> list[Case]:
    traces, gpus, jobs = study_size()
    size = "every job" if jobs is None else f"first {jobs} jobs"
    out = []
    for trace in traces:
        for count in gpus:
            for variant in study.VARIANTS:
                # Seconds are a policy call's p95; the 1 s target holds at 48 GPUs on MIX2.
                target = 1.0 if variant.ours and count == 48 and trace == "MIX2" else None
                out.append(
                    Case(
                        GROUP,
                        f"{trace} ({size}) on {count} GPUs: {variant.label} (call p95 s)",
                        dict,
                        "(simulator)",
                        target_seconds=target,
                        runner=lambda case, t=trace, g=count, p=variant.label: study_row(
                            case, t, g, p
                        ),
                    )
                )
    return out
