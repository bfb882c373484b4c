"""The comparison Chronus's paper makes, in one call: its Philly traces (the bundled first two
hours of MIX1, MIX2 and SLO) on shrinking clusters, every policy under the same lease mechanics
and restart overheads, scored as Chronus's `schedule_summary` scores them.

    from apportion.simulator import deadline_study as study
    runs = study.runs(study.TRACES, gpus=(16, 24, 48))
    done = run_sweep(runs)                      # any executor, as every sweep
    frame = study.table(runs, done.results)     # one row per (trace, cluster, policy)
    study.targets(frame)                        # the claims, per (trace, cluster)

Every run: leases of 20 minutes on 8-GPU nodes, Chronus's overhead model (30 + 30 log2 g
seconds at every start), the policy asked as a deployment would (every arrival, completion and
lease boundary) unless the variant says otherwise. Arrivals are spread as in
`traces.chronus.chronus_spec`: the whole sample would keep 32 GPUs 80 % busy, so 16, 24 and 48 GPUs
are offered 160 %, 107 % and 53 %. Variants: `deadline_admission` asked on events, every 5
minutes and every lease; Chronus's own one-by-one admission; EDF and SRTF.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from apportion.simulator.config import Mode, SimConfig
from apportion.simulator.result import SimulationResult
from apportion.simulator.sweep import RunSpec
from apportion.simulator.traces.chronus import (
    MIX1_FIRST_2H,
    MIX2_FIRST_2H,
    SLO_FIRST_2H,
    chronus_spec,
)

TRACES: dict[str, Path] = {"MIX1": MIX1_FIRST_2H, "MIX2": MIX2_FIRST_2H, "SLO": SLO_FIRST_2H}
LEASE_SECONDS = 1200.0
#: A generous limit per admission call: answers must not depend on how busy the machine is.
TIME_LIMIT = 30.0
#: Best-effort JCT may be at most this multiple of SRTF's.
BEST_EFFORT_SLACK = 1.1


@dataclass(frozen=True)
class Variant:
    """A policy as the study runs it: its name in tables, the simulator's policy and options,
    and how often it is asked (None: on arrivals, completions and lease boundaries)."""

    label: str
    policy: str
    options: Mapping[str, Any] = field(default_factory=dict)
    call_seconds: float | None = None

    @property
    def ours(self) -> bool:
        return self.policy == "deadline_admission"


OURS = "deadline_admission"
VARIANTS = (
    Variant(OURS, OURS, {"time_limit": TIME_LIMIT}),
    Variant(f"{OURS} every 5 min", OURS, {"time_limit": TIME_LIMIT}, 300.0),
    Variant(f"{OURS} every lease", OURS, {"time_limit": TIME_LIMIT}, LEASE_SECONDS),
    Variant("chronus_one_by_one", "chronus_one_by_one", {"time_limit": TIME_LIMIT}),
    Variant("edf", "edf"),
    Variant("srtf", "srtf"),
)
CONFIG = SimConfig(mode=Mode.LEASES, lease_seconds=LEASE_SECONDS, overhead_model="chronus")


def runs(
    traces: Mapping[str, Path | str],
    gpus: Sequence[int],
    jobs: int | None = None,
    variants: Sequence[Variant] = VARIANTS,
) -> list[RunSpec]:
    """Every variant on every (trace, cluster size), traces first."""
    out = []
    for path in traces.values():
        for size in gpus:
            spec = chronus_spec(Path(path), jobs, size)
            for variant in variants:
                config = replace(
                    CONFIG,
                    policy=variant.policy,
                    options=dict(variant.options),
                    call_seconds=variant.call_seconds,
                )
                out.append(RunSpec(config, replace(spec, seed=0), 0, spec.load))
    return out


def labels(runs: Iterable[RunSpec], traces: Mapping[str, Path | str]) -> list[dict[str, Any]]:
    """Trace name, cluster size and variant label of each run."""
    names = {str(path): name for name, path in traces.items()}
    out = []
    for run in runs:
        variant = next(
            v
            for v in VARIANTS
            if v.policy == run.config.policy and v.call_seconds == run.config.call_seconds
        )
        gpus = sum((run.trace.cluster or {}).values())
        out.append({"trace": names[str(run.trace.source)], "gpus": gpus, "policy": variant.label})
    return out


def row(result: SimulationResult) -> dict[str, Any]:
    """What a run measured, as Chronus scores it."""
    s = result.summary
    calls = result.calls["seconds"].to_numpy(dtype=float)
    best_effort = s.get("best_effort_jct_mean")
    return {
        "satisfaction": s["satisfaction"],
        "first_deadline_met": s["first_deadline_met_fraction"],
        "deadline_met": s["deadline_met_fraction"],
        "best_effort_jct_h": None if best_effort is None else best_effort / 3600,
        "guarantees_broken": s["guarantees_broken"],
        "guaranteed_missed": s["guaranteed_missed"],
        "guaranteed": int(result.records["guaranteed"].sum()),
        "call_p95_s": float(np.percentile(calls, 95)) if calls.size else 0.0,
        "calls": int(calls.size),
        "moves": s["moves"],
        "lost_h": s["lost_seconds"] / 3600,
        "unfinished": s["unfinished"],
    }


def table(
    runs: Sequence[RunSpec],
    results: Sequence[SimulationResult],
    traces: Mapping[str, Path | str] = TRACES,
) -> pd.DataFrame:
    """One row per run: trace, gpus, policy and `row`."""
    rows = [
        {**label, **row(result)}
        for label, result in zip(labels(runs, traces), results, strict=True)
    ]
    return pd.DataFrame(rows)


def targets(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (trace, cluster): deadline admission's satisfaction less the best baseline's, its
    first deadlines met less EDF's, its best-effort JCT over SRTF's, and the guarantees broken
    at any call frequency; `met` says whether each claim holds."""
    out = []
    for (trace, gpus), part in frame.groupby(["trace", "gpus"], sort=False):
        by = part.set_index("policy")
        ours = by.loc[OURS]
        baselines = by.loc[["chronus_one_by_one", "edf", "srtf"]]
        ours_all = by.loc[[v.label for v in VARIANTS if v.ours]]
        best = baselines["satisfaction"].idxmax()
        ratio = None
        if pd.notna(ours["best_effort_jct_h"]) and by.loc["srtf", "best_effort_jct_h"]:
            ratio = ours["best_effort_jct_h"] / by.loc["srtf", "best_effort_jct_h"]
        out.append(
            {
                "trace": trace,
                "gpus": gpus,
                "satisfaction_margin": ours["satisfaction"] - baselines["satisfaction"].max(),
                "best_baseline": best,
                "first_met_margin_vs_edf": ours["first_deadline_met"]
                - by.loc["edf", "first_deadline_met"],
                "best_effort_jct_vs_srtf": ratio,
                "broken_any_frequency": int(ours_all["guarantees_broken"].sum()),
                "missed_any_frequency": int(ours_all["guaranteed_missed"].sum()),
            }
        )
    checks = pd.DataFrame(out)
    checks["met"] = (
        (checks["satisfaction_margin"] >= -1e-12)
        & (checks["first_met_margin_vs_edf"] >= -1e-12)
        & (checks["best_effort_jct_vs_srtf"].fillna(0.0) <= BEST_EFFORT_SLACK)
        & (checks["broken_any_frequency"] == 0)
        & (checks["missed_any_frequency"] == 0)
    )
    return checks
