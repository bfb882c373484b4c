"""Deadline admission told remaining times with an error, in Chronus's world: the runs of
`deadline_study` (its traces, clusters and lease mechanics; the policy asked on every event)
with the remaining times believed apart from the truth (`simulator.remaining_belief`).

    from apportion.simulator import remaining_study as noisy
    runs = noisy.runs(noisy.TRACES, gpus=(16, 24, 48))
    done = run_sweep([r.spec for r in runs])
    frame = noisy.table(runs, done.results)     # one row per (trace, cluster, arm, seed)
    noisy.targets(frame)                        # the claims, per (trace, cluster)

Arms: `oracle` (told the truth, σ = 0), `margin` (σ = 0.3 and the margin derived from it sent
as every job's `remaining_time_uncertainty`), `no margin` (σ = 0.3, the belief taken as exact),
the last two over noise seeds 0, 1, 2. Everything is scored on the truth.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from apportion.simulator import deadline_study as study
from apportion.simulator.config import REMAINING_TIME_LEVEL
from apportion.simulator.result import SimulationResult
from apportion.simulator.sweep import RunSpec

TRACES = study.TRACES
SIGMA = 0.3
SEEDS = (0, 1, 2)
#: The margin's satisfaction may be at most this share below the oracle's.
SATISFACTION_SLACK = 0.03


@dataclass(frozen=True)
class Arm:
    """What the policy is told: remaining times with noise σ and the margin at `level`."""

    label: str
    sigma: float
    level: float | None
    estimator: str = "none"


def arms(sigma: float = SIGMA, level: float = REMAINING_TIME_LEVEL) -> tuple[Arm, ...]:
    """The oracle, then the belief kept and learned online, each with and without the margin."""
    return (
        Arm("oracle", 0.0, None),
        Arm("margin", sigma, level),
        Arm("no margin", sigma, None),
        Arm("online margin", sigma, level, "online"),
        Arm("online no margin", sigma, None, "online"),
    )


@dataclass(frozen=True)
class NoisyRun:
    trace: str
    gpus: int
    arm: Arm
    seed: int
    spec: RunSpec


def runs(
    traces: Mapping[str, Path | str],
    gpus: Sequence[int],
    jobs: int | None = None,
    arms: Sequence[Arm] = arms(),
    seeds: Sequence[int] = SEEDS,
) -> list[NoisyRun]:
    """Every arm on every (trace, cluster size); the oracle once (it draws nothing), the
    others once per noise seed."""
    out = []
    for name, path in traces.items():
        for size in gpus:
            (base,) = study.runs({name: path}, (size,), jobs, variants=study.VARIANTS[:1])
            for arm in arms:
                for seed in seeds if arm.sigma else seeds[:1]:
                    config = replace(
                        base.config,
                        remaining_time_noise=arm.sigma,
                        remaining_time_level=arm.level,
                        remaining_time_estimator=arm.estimator,
                        seed=seed,
                    )
                    out.append(NoisyRun(name, size, arm, seed, replace(base, config=config)))
    return out


def table(runs: Sequence[NoisyRun], results: Sequence[SimulationResult]) -> pd.DataFrame:
    """One row per run: trace, gpus, arm, seed, the margin sent and `deadline_study.row`."""
    rows = []
    for run, result in zip(runs, results, strict=True):
        rows.append(
            {
                "trace": run.trace,
                "gpus": run.gpus,
                "arm": run.arm.label,
                "seed": run.seed,
                "margin": result.summary.get("remaining_time_margin", 0.0),
                **study.row(result),
            }
        )
    return pd.DataFrame(rows)


def targets(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (trace, cluster) and arm told a belief: its satisfaction (mean over seeds) over the
    oracle's, and the guarantees it broke and missed (summed over seeds); `met` (arms with the
    margin): none broken nor missed, and satisfaction within `SATISFACTION_SLACK` of the
    oracle's. Without the margin `met` is left empty: those rows show the cost of ignoring the
    error."""
    out: list[dict[str, Any]] = []
    for (trace, gpus), part in frame.groupby(["trace", "gpus"], sort=False):
        oracle = part.loc[part["arm"] == "oracle", "satisfaction"].mean()
        for arm, rows in part[part["arm"] != "oracle"].groupby("arm", sort=False):
            satisfaction = rows["satisfaction"].mean()
            broken = int(rows["guarantees_broken"].sum())
            missed = int(rows["guaranteed_missed"].sum())
            with_margin = not str(arm).endswith("no margin")
            ok = broken == missed == 0 and satisfaction >= oracle * (1 - SATISFACTION_SLACK)
            out.append(
                {
                    "trace": trace,
                    "gpus": gpus,
                    "arm": arm,
                    "seeds": len(rows),
                    "satisfaction": satisfaction,
                    "oracle": oracle,
                    "vs_oracle": satisfaction / oracle,
                    "broken": broken,
                    "missed": missed,
                    "met": ok if with_margin else None,
                }
            )
    return pd.DataFrame(out)
