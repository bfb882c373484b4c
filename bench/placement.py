"""Contention-penalized placement (issue 6) on DeepShare's data: its 4 × 8 cluster, then 32 and
64 nodes of 8 GPUs. Snapshots come from DeepShare's real trace: the queue head runs (random
placements with DeepShare's shapes) until the next job does not fit or `running` jobs run, the
next `candidates` wait; W1 = 0.5."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from bench.harness import Case
from solver.datasets.deepshare import read_contention_csv, read_trace, trace_snapshot

GROUP = "contention_placement"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@cache
def _table() -> dict[str, Any]:
    return read_contention_csv(FIXTURES / "deepshare_shared_thp_ratio.csv").model_dump()


def _snapshot(nodes: int, running: int, candidates: int, seed: int = 0) -> dict[str, Any]:
    trace = read_trace(FIXTURES / "deepshare_trace0.json")[20 * seed :]
    snapshot = trace_snapshot(trace, nodes=nodes, running=running, candidates=candidates, seed=seed)
    return {**snapshot, "contention": _table()}


def _note(result: Any) -> str:
    s = result.summary
    gap = result.solver.mip_gap
    return (
        (f"gap {gap:.2%}, " if gap is not None else "")
        + f"started {s['started']}/{s['started'] + s['waiting']}, running {s['running']}, "
        + (f"util {s['utilization']:.0%}, mean CS {s['mean_contention_sensitivity']:.3f}")
    )


def cases() -> list[Case]:
    out = [
        Case(
            GROUP,
            "DeepShare 4×8, 6 candidates",
            lambda: _snapshot(4, 8, 6),
            "contention_placement",
            {"w1": 0.5},
            target_seconds=0.1,
            extra=_note,
        ),
        Case(
            GROUP,
            "DeepShare 4×8, 6 candidates, no single node",
            lambda: _snapshot(4, 8, 6),
            "contention_placement",
            {"w1": 0.5, "allow_single_node": False},
            target_seconds=0.1,
            extra=_note,
        ),
    ]
    # 32 nodes at DeepShare's density (1.5 running jobs per node: ~90 % busy), then emptier.
    for running, seed, target in [(48, 0, 2.0), (40, 1, 2.0), (40, 2, None), (40, 4, None)]:
        out.append(
            Case(
                GROUP,
                f"32×8, 40 candidates, ≤{running} running, seed {seed}",
                lambda r=running, s=seed: _snapshot(32, r, 40, s),
                "contention_placement",
                {"w1": 0.5, "time_limit": 10.0},
                target_seconds=target,
                extra=_note,
            )
        )
    # What a scheduler with a 2 s budget gets on the last two rows above: the incumbent and its
    # proven gap.
    for seed in (2, 4):
        out.append(
            Case(
                GROUP,
                f"32×8, 40 candidates, ≤40 running, seed {seed}, 2 s limit",
                lambda s=seed: _snapshot(32, 40, 40, s),
                "contention_placement",
                {"w1": 0.5, "time_limit": 2.0},
                target_seconds=2.1,
                extra=_note,
            )
        )
    for running in (96, 70):
        out.append(
            Case(
                GROUP,
                f"64×8, 100 candidates, ≤{running} running, 10 s limit",
                lambda r=running: _snapshot(64, r, 100),
                "contention_placement",
                {"w1": 0.5, "time_limit": 10.0},
                target_seconds=10.5,
                extra=_note,
            )
        )
    return out
