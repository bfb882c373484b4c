"""Outcome policies on seeded random windows of every bundled trace (`simulator.windows`).

Each world runs its outcome policies and its plain baselines on the same windows, at several
cluster sizes, under the same mechanics:

- rigid (Tiresias): the 60-job trace and the Philly sample (arrivals 1.5× as dense), 62-s
  preemptions, decision by decision: 2D-LAS and 2D-Gittins (greedy admission) against YARN-CS,
  FIFO and SRTF; average JCT;
- deadline (Chronus): MIX1, MIX2 and SLO on 16, 24 and 48 GPUs, arrivals spread as in
  `simulator.deadline_study`, Chronus's restart overhead on: deadline admission against EDF,
  Chronus's one-by-one, SRTF and FIFO; satisfaction, first deadlines met, best-effort JCT ÷
  SRTF's, guarantees broken;
- contention (DeepShare): `simulate` and `real` trace0 on 4 and 8 nodes of 8 GPUs, 300-s rounds:
  the contention placement (W1 and priority levels as tuned, `CONTENTION_W1`) against FIFO,
  SRTF and LAS; average and p99 JCT;
- elastic (Sia): Saturn and Philly workload 1 on Sia's cluster and on its nodes halved: `sia`
  against ONES (its exact policy `ones` and its evolutionary search) and
  `elastic_max_goodput`; average JCT (`bench.windows_elastic`);
- gavel: Gavel's two physical-cluster traces on 36 and 108 GPUs (a third of each type) under
  Gavel's rounds: heterogeneity-aware max-min and finish-time fairness against FIFO,
  heterogeneity-agnostic max-min and SRTF; average JCT, and the worst job's (`bench.windows_gavel`).

The windows are drawn once per trace by `WINDOW_SEED`, fixed before any policy was run on them
(and never to be changed after looking); windows are of a fixed number of jobs, so a pooled
figure (the mean over windows) weighs every job alike. Per (trace, size, policy) the table
gives the pooled figure and, against the best plain baseline of each window (FIFO included),
the worst window's ratio (JCT: the largest ratio; satisfaction: the smallest).

    python -m bench.windows              # small: 3 windows of short length per trace and size
    python -m bench.windows --full       # or APPORTION_FULL=1: 20 windows, longer ones
    python -m bench.windows --world deadline --world rigid   # some worlds only
    APPORTION_WINDOWS=20 python -m bench.windows   # the small size's lengths, 20 windows
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cache, partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from apportion.simulator import deadline_study as study
from apportion.simulator.config import Mode, SimConfig
from apportion.simulator.result import SimulationResult
from apportion.simulator.sources import TraceSpec
from apportion.simulator.sweep import RunSpec, run_sweep
from apportion.simulator.traces.chronus import chronus_spec
from apportion.simulator.traces.deepshare import SIMULATE_TRACE0, TRACE0
from apportion.simulator.traces.tiresias import JOBS_60
from apportion.simulator.windows import Window, draw_windows, windowed
from bench.harness import Case, Row

GROUP = "windows"
FULL = os.environ.get("APPORTION_FULL") == "1" or "--full" in sys.argv
#: Fixed before any policy ran on a window; every trace's windows come from it.
WINDOW_SEED = 20261128
#: Windows per trace and size; APPORTION_WINDOWS=N keeps the size's lengths with N windows.
COUNT = int(os.environ.get("APPORTION_WINDOWS", 20 if FULL else 3))
PREEMPTION_SECONDS = 62.0  # Tiresias's measured checkpoint and restore
#: The contention placement's W1 and priority levels, tuned on DeepShare's training episodes
#: (jobsets 0–2, one episode each, on 4 and 8 nodes), never on these windows: W1 = 0.4 had the
#: lowest average JCT against the best of FIFO, SRTF and LAS there (0.75× against 0.78× at
#: DeepShare's 0.3); then 2 levels the lowest p99 of the level counts meeting the average
#: target in every run (8 nodes: 0.64× against 0.74× with 4 levels, 0.66× with 1).
CONTENTION_W1 = 0.4
CONTENTION_LEVELS = 2


@dataclass(frozen=True)
class World:
    """Policies on windows of traces at cluster sizes; `score` is the figure the worst window is
    judged by (lower is better unless `higher`), `plain` the baselines it is judged against."""

    name: str
    traces: dict[str, Callable[[int], Any]]  # name → its `TraceSpec` at a size
    sizes: dict[str, tuple[int, ...]]
    length: dict[str, tuple[int, int]]  # jobs per window of each trace: small, full
    policies: dict[str, Any]  # label → its `SimConfig`
    plain: tuple[str, ...]
    measure: Callable[[SimulationResult], dict[str, Any]]
    score: str
    higher: bool = False
    # A world outside the trace simulator measures its own runs (the elastic one).
    runner: Callable[[World], pd.DataFrame] | None = field(default=None)


def _jct(result: SimulationResult) -> dict[str, Any]:
    s = result.summary
    return {
        "jct_h": s["jct_mean"] / 3600,
        "jct_p99_h": s["jct_p99"] / 3600,
        "unfinished": s["unfinished"],
    }


def _deadline(result: SimulationResult) -> dict[str, Any]:
    r = study.row(result)
    return {
        "satisfaction": r["satisfaction"],
        "first_met": r["first_deadline_met"],
        "be_jct_h": r["best_effort_jct_h"],
        "broken": r["guarantees_broken"],
        "unfinished": r["unfinished"],
    }


def _rigid() -> World:
    from apportion.refdata.tiresias import yarn_distribution

    gittins = {"service_distribution": yarn_distribution()}
    base = SimConfig(mode=Mode.SCHEDULE, preemption_seconds=PREEMPTION_SECONDS)

    def tiresias(policy: str, **more: Any) -> SimConfig:
        return replace(base, policy=policy, options={"admission": "greedy"}, **more)

    return World(
        "rigid",
        {
            "tiresias60": lambda g: _single("tiresias", str(JOBS_60), g, 4),
            "philly": lambda g: replace(_single("philly", None, g, 4), load=1.5),
        },
        {"tiresias60": (8, 16), "philly": (32, 64)},
        {"tiresias60": (20, 30), "philly": (60, 150)},
        {
            "2d_las": tiresias("tiresias_las"),
            "2d_gittins": tiresias("tiresias_gittins", snapshot_fields=gittins),
            "yarn_cs": replace(base, policy="yarn_cs"),
            "fifo": replace(base, policy="fifo_baseline"),
            "srtf": replace(base, policy="srtf"),
        },
        ("yarn_cs", "fifo", "srtf"),
        _jct,
        "jct_h",
    )


def _single(kind: str, source: str | None, gpus: int, per_node: int) -> TraceSpec:
    return TraceSpec(kind, source, cluster={"gpu": gpus}, gpus_per_node=per_node)


def _chronus(path: Path, gpus: int) -> TraceSpec:
    return chronus_spec(path, None, gpus)


def _deadlines() -> World:
    def config(policy: str, options: dict[str, Any] | None = None) -> SimConfig:
        return replace(study.CONFIG, policy=policy, options=options or {})

    limit = {"time_limit": study.TIME_LIMIT}
    return World(
        "deadline",
        {name: partial(_chronus, path) for name, path in study.TRACES.items()},
        {name: (16, 24, 48) for name in study.TRACES},
        {name: (20, 40) for name in study.TRACES},
        {
            "deadline_admission": config(study.OURS, limit),
            "chronus_one_by_one": config("chronus_one_by_one", limit),
            "edf": config("edf"),
            "srtf": config("srtf"),
            "fifo": config("fifo_baseline"),
        },
        ("chronus_one_by_one", "edf", "srtf", "fifo"),
        _deadline,
        "satisfaction",
        higher=True,
    )


def _contention() -> World:
    def config(policy: str, options: dict[str, Any] | None = None) -> SimConfig:
        return SimConfig(policy=policy, options=options or {}, round_seconds=300.0)

    return World(
        "contention",
        {
            "deepshare_simulate": lambda g: _single("deepshare", str(SIMULATE_TRACE0), g, 8),
            "deepshare_real": lambda g: _single("deepshare", str(TRACE0), g, 8),
        },
        {"deepshare_simulate": (32, 64), "deepshare_real": (32, 64)},
        {"deepshare_simulate": (24, 64), "deepshare_real": (24, 64)},
        {
            "contention_placement": config(
                "contention_placement",
                {"w1": CONTENTION_W1, "priority_levels": CONTENTION_LEVELS},
            ),
            "fifo": config("fifo_baseline"),
            "srtf": config("srtf"),
            "las": config("las"),
        },
        ("fifo", "srtf", "las"),
        _jct,
        "jct_h",
    )


def _elastic() -> World:
    from bench.windows_elastic import elastic_world

    return elastic_world()


def _gavel() -> World:
    from bench.windows_gavel import gavel_world

    return gavel_world()


WORLDS: dict[str, Callable[[], World]] = {
    "rigid": _rigid,
    "deadline": _deadlines,
    "contention": _contention,
    "elastic": _elastic,
    "gavel": _gavel,
}


def windows_of(arrivals: list[float], length: int) -> list[Window]:
    """`COUNT` windows of `length` jobs of a trace with these arrivals, by `WINDOW_SEED`."""
    return draw_windows(arrivals, COUNT, WINDOW_SEED, jobs=min(length, len(arrivals)))


def runs_of(world: World) -> tuple[list[RunSpec], list[dict[str, Any]]]:
    """Every (trace, size, window, policy) run of `world`, and its labels."""
    lengths = world.length
    runs, labels = [], []
    for trace, make in world.traces.items():
        for size in world.sizes[trace]:
            spec = make(size)
            length = lengths[trace][1 if FULL else 0]
            arrivals = [job.arrival for job in spec.load_trace().jobs]
            for index, window in enumerate(windows_of(arrivals, length)):
                for label, config in world.policies.items():
                    runs.append(RunSpec(config, windowed(spec, window), 0, spec.load))
                    labels.append(
                        {"world": world.name, "trace": trace, "gpus": size, "window": index}
                        | {"policy": label, "jobs": window.jobs}
                    )
    return runs, labels


def measure(world: World, workers: int | None = None) -> pd.DataFrame:
    """One row per run of `world`: its labels and what `world.measure` reads."""
    if world.runner is not None:
        return world.runner(world)
    runs, labels = runs_of(world)
    done = run_sweep(runs, workers=workers)
    rows = [
        {**label, **world.measure(result), "wall_s": result.wall_seconds}
        for label, result in zip(labels, done.results, strict=True)
    ]
    return pd.DataFrame(rows)


def against_plain(frame: pd.DataFrame, world: World) -> pd.DataFrame:
    """Each run's score ÷ the best plain baseline's in its window (and, in the deadline world,
    its best-effort JCT ÷ SRTF's)."""
    keys = ["trace", "gpus", "window"]
    plain = frame[frame["policy"].isin(world.plain)]
    pick = "max" if world.higher else "min"
    best = plain.groupby(keys)[world.score].agg(pick).rename("best_plain")
    out = frame.join(best, on=keys)
    with np.errstate(divide="ignore", invalid="ignore"):
        out["vs_plain"] = out[world.score].astype(float) / out["best_plain"].astype(float)
    if "be_jct_h" in out:
        srtf = frame[frame["policy"] == "srtf"].set_index(keys)["be_jct_h"].rename("srtf_be")
        out = out.join(srtf, on=keys)
        out["be_vs_srtf"] = out["be_jct_h"].astype(float) / out["srtf_be"].astype(float)
    return out


def summarize(frame: pd.DataFrame, world: World) -> pd.DataFrame:
    """Per (trace, size, policy): pooled figures (means over windows), the pooled score's ratio
    to the best plain baseline's pooled score, the worst window's ratio to that window's best
    plain baseline, and the windows counted."""
    scored = against_plain(frame, world)
    worst = "min" if world.higher else "max"
    figures = [c for c in ("satisfaction", "first_met", "jct_h", "jct_p99_h") if c in scored]
    agg: dict[str, tuple[str, str]] = {c: (c, "mean") for c in figures}
    agg["worst_vs_plain"] = ("vs_plain", worst)
    agg["windows"] = ("window", "nunique")
    agg["unfinished"] = ("unfinished", "sum")
    if "be_vs_srtf" in scored:
        agg["be_jct_h"] = ("be_jct_h", "mean")
        agg["be_vs_srtf"] = ("be_vs_srtf", "mean")
        agg["broken"] = ("broken", "sum")
    table = scored.groupby(["trace", "gpus", "policy"], sort=False).agg(**agg).reset_index()
    plain = table[table["policy"].isin(world.plain)].groupby(["trace", "gpus"])[world.score]
    best = plain.max() if world.higher else plain.min()
    pooled = table[world.score] / table.join(best.rename("best"), on=["trace", "gpus"])["best"]
    table.insert(table.columns.get_loc("worst_vs_plain"), "pooled_vs_plain", pooled)
    table.insert(0, "world", world.name)
    return table


@cache
def _measured(name: str) -> pd.DataFrame:
    world = WORLDS[name]()
    return summarize(measure(world), world)


def _row(case: Case, name: str, trace: str, gpus: int, policy: str) -> Row:
    table = _measured(name)
    mine = table.query("trace == @trace and gpus == @gpus and policy == @policy").iloc[0]
    world = WORLDS[name]()
    shown = ", ".join(
        f"{c} {mine[c]:.3f}"
        for c in ("first_met", "jct_p99_h", "be_jct_h", "be_vs_srtf", "broken")
        if c in mine and pd.notna(mine[c])
    )
    return Row(
        case=case,
        jobs=int(mine["windows"]),
        types=1,
        validate=0.0,
        build=0.0,
        solve=0.0,
        total=0.0,
        objective=float(mine[world.score]),
        status=f"{int(mine['unfinished'])} unfinished",
        backend="simulator",
        ratio=float(mine["worst_vs_plain"]),
        note=f"pooled {world.score}; ratio: worst window vs best plain baseline; {shown}",
    )


def cases() -> list[Case]:
    out = []
    for name, make in WORLDS.items():
        world = make()
        for trace, sizes in world.sizes.items():
            for gpus in sizes:
                for policy in world.policies:
                    out.append(
                        Case(
                            GROUP,
                            f"{name}: {trace} on {gpus} GPUs, {policy} ({COUNT} windows)",
                            dict,
                            "(simulator)",
                            runner=partial(_row, name=name, trace=trace, gpus=gpus, policy=policy),
                        )
                    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--full", action="store_true", help="20 windows per trace and size")
    parser.add_argument("--world", action="append", choices=sorted(WORLDS), default=None)
    parser.add_argument("--csv", default=None, help="also write every run's row to CSV.WORLD.csv")
    args = parser.parse_args()
    tables = []
    for name in args.world or list(WORLDS):
        world = WORLDS[name]()
        frame = measure(world)
        if args.csv:  # each world as it is done, so a long run keeps what it measured
            frame.assign(world=name).to_csv(f"{args.csv}.{name}.csv", index=False)
        tables.append(summarize(frame, world))
        print(markdown(tables[-1]), flush=True)


def markdown(table: pd.DataFrame) -> str:
    """The table as Markdown, figures to 3 decimals, blanks where a world has no such column."""

    def cell(value: Any) -> str:
        if isinstance(value, float | np.floating):
            return "" if np.isnan(value) else f"{value:.3f}"
        return str(value)

    lines = ["| " + " | ".join(table.columns) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in table.itertuples(False)]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
