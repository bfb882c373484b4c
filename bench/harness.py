"""Benchmark harness: cases, timing through the public `solve`, and the printed table."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.table import Table

from apportion.solver import solve


@dataclass(frozen=True)
class Case:
    """One benchmark row: a snapshot maker, the policy and options, and the target."""

    group: str
    name: str
    make: Callable[[], dict[str, Any]]
    policy: str
    options: dict[str, Any] = field(default_factory=dict)
    target_seconds: float | None = None
    # Same snapshot, solved another way in the same process; the table shows total / baseline.
    baseline: dict[str, Any] | None = None
    extra: Callable[[Any], str] | None = None  # more to print (gap, values admitted, ...)
    # A row measured some other way than `solve` (e.g. a model handed straight to a backend).
    runner: Callable[[Case], Row] | None = None


@dataclass
class Row:
    case: Case
    jobs: int
    types: int
    validate: float
    build: float
    solve: float
    total: float
    objective: float | None
    status: str
    backend: str
    ratio: float | None
    note: str


def best_of(run: Callable[[], object], repeats: int, warm: bool = False) -> float:
    """The shortest wall time of `repeats` calls of `run` (after one untimed call if `warm`)."""
    if warm:
        run()
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best


def run_case(case: Case) -> Row:
    if case.runner is not None:
        return case.runner(case)
    snapshot = case.make()
    result = solve(snapshot, policy=case.policy, options=case.options)
    ratio = None
    if case.baseline is not None:
        base = solve(snapshot, policy=case.policy, options=case.baseline)
        ratio = result.solver.total_seconds / base.solver.total_seconds
    report = result.solver
    return Row(
        case=case,
        jobs=len(snapshot.get("jobs", [])),
        types=len(result.gpu_types),
        validate=report.validate_seconds,
        build=report.build_seconds,
        solve=report.solve_seconds,
        total=report.total_seconds,
        objective=result.objective,
        status=result.status.value,
        backend=f"{report.backend}/{report.solver}",
        ratio=ratio,
        note=case.extra(result) if case.extra else "",
    )


def print_table(rows: list[Row], console: Console | None = None) -> None:
    table = Table(
        "group",
        "case",
        "jobs",
        "types",
        "backend",
        "validate s",
        "build s",
        "solve s",
        "total s",
        "target s",
        "ok",
        "vs baseline",
        "objective",
        "status",
        "note",
        title="apportion benchmarks",
    )
    for r in rows:
        target = r.case.target_seconds
        ok = "" if target is None else ("yes" if r.total <= target else "NO")
        table.add_row(
            r.case.group,
            r.case.name,
            f"{r.jobs:,}",
            str(r.types),
            r.backend,
            f"{r.validate:.3f}",
            f"{r.build:.3f}",
            f"{r.solve:.3f}",
            f"{r.total:.3f}",
            "" if target is None else f"{target:g}",
            ok,
            "" if r.ratio is None else f"{r.ratio:.2f}×",
            "—" if r.objective is None else f"{r.objective:.6g}",
            r.status,
            r.note,
        )
    (console or Console(width=250)).print(table)
