"""Contention-penalized placement (issue 6) on DeepShare's data: its 4 × 8 cluster, then 32 and
64 nodes of 8 GPUs. Snapshots come from DeepShare's real trace: the queue head runs (random
placements with DeepShare's shapes) until the next job does not fit or `running` jobs run, the
next `candidates` wait; W1 = 0.5. The reference-objective rows (DeepShare's own reward, exact)
show their time against the default linear objective on the same snapshot, in the same process."""

from __future__ import annotations

from functools import cache
from typing import Any

from apportion.refdata import SOURCE
from apportion.refdata.deepshare import read_contention_csv, read_trace, trace_snapshot
from bench.harness import Case

GROUP = "contention_placement"


@cache
def _table() -> dict[str, Any]:
    return read_contention_csv(SOURCE / "deepshare_shared_thp_ratio.csv").model_dump()


def _snapshot(nodes: int, running: int, candidates: int, seed: int = 0) -> dict[str, Any]:
    trace = read_trace(SOURCE / "deepshare_trace0.json")[20 * seed :]
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


def _reference_note(result: Any) -> str:
    loss = result.summary["mean_throughput_loss"]
    return _note(result) + ("" if loss is None else f", mean loss {loss:.3f}")


def _reference(name: str, shape: tuple[int, int, int, int], limit: float) -> Case:
    """The reference objective on a trace snapshot, against the linear one (same limit)."""
    linear = {"w1": 0.5, "time_limit": limit}
    return Case(
        GROUP,
        f"{name}, reference objective",
        lambda: _snapshot(*shape),
        "contention_placement",
        {**linear, "objective": "reference"},
        baseline=linear,
        extra=_reference_note,
    )


def _row(name: str, shape: tuple[int, int, int, int], limit: float, target: float | None) -> Case:
    """A row on a trace snapshot (nodes, running, candidates, seed) at W1 = 0.5."""
    return Case(
        GROUP,
        name,
        lambda: _snapshot(*shape),
        "contention_placement",
        {"w1": 0.5, "time_limit": limit},
        target_seconds=target,
        extra=_note,
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
    # 32 nodes with at most 48 running jobs (~90 % of the GPUs busy), then 40 (~75 % busy, as
    # in the 4 × 8 row above); then what a scheduler with a 2 s budget gets on ten snapshots of
    # the latter: the placement, proven or with its gap.
    rows = [(48, 0, 10.0, 2.0), (40, 1, 10.0, 2.0), (40, 2, 10.0, None), (40, 4, 10.0, None)]
    rows += [(40, seed, 2.0, 2.1) for seed in range(1, 11)]
    for running, seed, limit, target in rows:
        budget = f", {limit:g} s limit" if limit < 10 else ""
        out.append(
            _row(
                f"32×8, 40 candidates, ≤{running} running, seed {seed}{budget}",
                (32, running, 40, seed),
                limit,
                target,
            )
        )
    out.append(_reference("DeepShare 4×8, 6 candidates", (4, 8, 6, 0), 10.0))
    for running, seed in ((48, 0), (40, 1), (40, 2)):
        name = f"32×8, 40 candidates, ≤{running} running, seed {seed}"
        out.append(_reference(name, (32, running, 40, seed), 10.0))
    for running in (96, 70):
        out.append(
            _row(
                f"64×8, 100 candidates, ≤{running} running, 10 s limit",
                (64, running, 100, 0),
                10.0,
                10.5,
            )
        )
    return out
