"""The Gavel world of `bench.windows`: Gavel's two physical-cluster traces under Gavel's round
mechanism, as `bench.gavel_fidelity` runs them (within 3 % of Gavel's own simulator there):
360-s rounds, Gavel's priority rule (`round_rule="gavel"`) and re-solve triggers
(`resolve=gavel`), servers of one GPU, V100 / P100 / K80 in equal numbers with Gavel's
throughput table.

Gavel's heterogeneity-aware max-min fairness (`max_min_fairness`, Gavel's
`max_min_fairness_perf`) and finish-time fairness against the plain baselines FIFO, Gavel's
heterogeneity-agnostic max-min (`max_min_agnostic`) and SRTF; average and p99 JCT. Each run
also records what a fairness policy is for (the worst job's JCT and FTF ρ, JCT ÷ its time
alone on an equal share), which `fairness` tables from the runs' CSV:

    APPORTION_WINDOWS=20 python -m bench.windows --full --world gavel --csv runs
    python -m bench.windows_gavel runs.gavel.csv      # the worst job, pooled

Sizes: 36 of each type (Gavel's simulated cluster, 108 GPUs) and 12 of each (36 GPUs, the
cluster of `bench.gavel_fidelity`'s continuous traces), so that one size contends: a window's
jobs ask for about 1.8 GPUs each. Window lengths: see `LENGTHS` and docs/WINDOWS.md.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from functools import partial
from typing import Any

import pandas as pd

from apportion.simulator.result import SimulationResult
from apportion.simulator.sources import TraceSpec
from apportion.simulator.traces.gavel import MAX_MIN_FAIRNESS_TRACE, MINIMIZE_MAKESPAN_TRACE
from bench.gavel_fidelity import GAVEL_RULES
from bench.windows import World

TYPES = ("v100", "p100", "k80")
#: Total GPUs, split equally over `TYPES`: Gavel's 36:36:36 and a contended 12:12:12.
SIZES = (36, 108)
TRACES = {
    "gavel_max_min": MAX_MIN_FAIRNESS_TRACE,  # 96 jobs, 36 at t = 0, the rest over 12.9 h
    "gavel_makespan": MINIMIZE_MAKESPAN_TRACE,  # 100 jobs, all at t = 0
}
#: Jobs per window, small and full: fixed from one probe window's CPU cost before the
#: 20-window run (docs/WINDOWS.md), not changed after.
LENGTHS = (24, 48)
#: label → the apportion policy (or baseline) it runs.
POLICIES = {
    "max_min_fairness": "max_min_fairness",
    "finish_time_fairness": "finish_time_fairness",
    "fifo": "fifo_baseline",
    "max_min_agnostic": "max_min_agnostic",
    "srtf": "srtf",
}
PLAIN = ("fifo", "max_min_agnostic", "srtf")


def spec(trace: str, gpus: int) -> TraceSpec:
    """Gavel's `trace` on `gpus` GPUs, a third of each type, on servers of one GPU."""
    if gpus % len(TYPES):
        raise ValueError(f"gpus: {gpus} does not split equally over {', '.join(TYPES)}")
    cluster = dict.fromkeys(TYPES, gpus // len(TYPES))
    return TraceSpec("gavel", str(TRACES[trace]), cluster=cluster, gpus_per_node=1)


def measure(result: SimulationResult) -> dict[str, Any]:
    """Average and p99 JCT, and the worst job's JCT and FTF ρ (hours; ρ a ratio)."""
    s = result.summary
    done = result.records[result.records["finished"]]
    return {
        "jct_h": s["jct_mean"] / 3600,
        "jct_p99_h": s["jct_p99"] / 3600,
        "jct_max_h": float(done["jct"].max()) / 3600,
        "ftf_rho_mean": s["ftf_rho_mean"],
        "ftf_rho_max": s["ftf_rho_max"],
        "makespan_h": s["makespan"] / 3600,
        "unfinished": s["unfinished"],
    }


def gavel_world() -> World:
    return World(
        "gavel",
        {name: partial(spec, name) for name in TRACES},
        dict.fromkeys(TRACES, SIZES),
        dict.fromkeys(TRACES, LENGTHS),
        {label: replace(GAVEL_RULES, policy=policy) for label, policy in POLICIES.items()},
        PLAIN,
        measure,
        "jct_h",
    )


def fairness(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (trace, GPUs, policy), from the world's runs: the worst job's JCT and FTF ρ,
    averaged over windows, and their ratio to the best plain baseline's average."""
    keys = ["trace", "gpus", "policy"]
    figures = ["jct_max_h", "ftf_rho_max", "ftf_rho_mean", "makespan_h"]
    table = frame.groupby(keys, sort=False)[figures].mean().reset_index()
    plain = table[table["policy"].isin(PLAIN)].groupby(["trace", "gpus"])
    for column in ("jct_max_h", "ftf_rho_max"):
        best = plain[column].min().rename("best")
        table[f"{column}_vs_plain"] = table[column] / table.join(best, on=["trace", "gpus"])["best"]
    return table


def main() -> None:
    from bench.windows import markdown

    for path in sys.argv[1:]:
        print(markdown(fairness(pd.read_csv(path))), flush=True)


if __name__ == "__main__":
    main()
