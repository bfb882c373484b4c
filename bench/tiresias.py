"""Tiresias's placement ILP (its appendix: a new job's workers and parameter servers on the nodes
that leave the least network traffic on the most loaded one), which its authors dropped as
"extremely slow" for a large cluster.

The snapshots (`refdata.tiresias.busy_cluster`): the 2,048-GPU `n256g8` cluster 80 % held by
running jobs of Philly's gang sizes and Tiresias's models, each on GPUs picked at random (so
nodes carry spread jobs' traffic and few are wholly free), and one 32-GPU job to place. Target:
proven optimal within 1 s. The rows solve the appendix's ILP (the min-max load, `tie_break` off)
and show, as the ratio, its time against the same snapshot with the tie-break level (then the
most traffic kept inside nodes). The last rows are the hard case (a flat model, Inception-v4's 32
equal parameter servers, on a lightly loaded network, where the new job alone sets the maximum)
under a 1 s limit: the incumbent placement and its gap.
"""

from __future__ import annotations

from typing import Any

from apportion.refdata.tiresias import busy_cluster
from bench.harness import Case

GROUP = "tiresias"
MODELS = ("vgg16", "alexnet", "resnet50", "inception4")
TARGET_SECONDS = 1.0


def _note(result: Any) -> str:
    s = result.summary
    gap = result.solver.mip_gap
    return (
        (f"gap {gap:.2%}, " if gap is not None else "")
        + f"max node load {s['max_network_load_before']:.0f} → {s['max_network_load']:.0f}, "
        + f"ILP solves {s['ilp_solves']}"
    )


def _ilp(model: str, seed: int) -> Case:
    return Case(
        GROUP,
        f"network load ILP, 32-GPU {model} on n256g8 80 % busy, seed {seed}",
        lambda: busy_cluster(seed=seed, new_job=(32, model)),
        "network_load_placement",
        {"tie_break": False},
        target_seconds=TARGET_SECONDS,
        baseline={"tie_break": True},
        extra=_note,
    )


def _limited(fill: float, seed: int) -> Case:
    return Case(
        GROUP,
        f"network load ILP, 32-GPU inception4 on n256g8 {fill:.0%} busy, seed {seed}, 1 s limit",
        lambda: busy_cluster(seed=seed, fill=fill, new_job=(32, "inception4")),
        "network_load_placement",
        {"tie_break": False, "time_limit": TARGET_SECONDS},
        extra=_note,
    )


def cases() -> list[Case]:
    rows = [_ilp(model, seed) for model in MODELS for seed in (0, 1, 2)]
    rows += [_limited(fill, 0) for fill in (0.0, 0.1)]
    return rows
