"""Which waiting jobs the schedule objective offers its model (`instance`): by priority, each
group of interchangeable jobs capped at what could run at once on the GPUs no solution frees, then
the first `candidates`; and which running jobs no solution stops.

Identical candidates start in order (`model`'s symmetry rows), so a group's members beyond its
room // demand never run in any optimum: leaving them out changes no optimum. The room of a group
counts the GPUs of its types, less those held by running jobs that keep them in every optimal
schedule. A running job of a better level than the candidate is not one of them by itself: it
may be preempted in turn by an even better waiting job, whose GPUs then come back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from apportion.formulations.placement.options import ContentionPlacementOptions
from apportion.solver.arraytypes import BoolArray, FloatArray, IntArray
from apportion.solver.snapshot import Job

if TYPE_CHECKING:
    from apportion.formulations.placement.schedule.instance import Shapes


def identity(job: Job, shapes: Shapes, speeds: list[float], level: int) -> tuple[object, ...]:
    return (job.workload_class, job.scale_factor, level, tuple(shapes), tuple(speeds))


def kept_for_sure(
    per_job: tuple[FloatArray, IntArray, FloatArray],
    running: list[int],
    waiting: list[int],
    bounds: tuple[float, float, int],
    options: ContentionPlacementOptions,
) -> BoolArray:
    """Per running job: it holds its GPUs where it runs in every optimal schedule (moves none,
    or under preempt a job no solution stops, by the rule of `never_stopped` with every waiting job
    that has a shape as a candidate, the fastest speed and the largest loss any could have)."""
    if options.moves == "none":
        return np.ones(len(running), dtype=bool)
    if options.moves == "migrate":  # even a job that keeps running may run elsewhere
        return np.zeros(len(running), dtype=bool)
    weight, demand, stay_speed = per_job
    fastest, worst_loss, total = bounds
    best = float(weight[waiting].max(initial=0.0))
    progress = options.contention_value == "progress"
    price = per_gpu_price(options.w1, progress, weight, np.array([fastest]))
    return never_stopped(
        (weight[running], demand[running], stay_speed),
        best,
        fastest,
        price * total * worst_loss,
        1.0 - options.w1,
    )


def per_gpu_price(w1: float, progress: bool, weight: FloatArray, speed: FloatArray) -> float:
    """The most a GPU's unit of loss may cost (`price`): W1, plus W2·π·σ at their largest
    under the progress value."""
    if not progress:
        return w1
    return w1 + (1.0 - w1) * float(weight.max(initial=0.0)) * float(speed.max(initial=1.0))


def room_of(
    shapes: list[Shapes],
    held: list[tuple[IntArray, IntArray]],
    kept: BoolArray,
    typed: tuple[IntArray, IntArray],
) -> IntArray:
    """Per job: the GPUs it could run on in any optimal schedule, all other waiting jobs aside
    (nodes of the types its shapes use, less what running jobs that keep their GPUs hold)."""
    node_gpus, types = typed
    left = node_gpus.copy()
    for (nodes, gpus), sure in zip(held, kept, strict=True):
        if sure:
            left[nodes] -= gpus
    per_type = np.bincount(types, weights=left, minlength=int(types.max(initial=0)) + 1)
    out = [int(per_type[sorted({t for _, _, t in s})].sum()) if s else 0 for s in shapes]
    return np.array(out, dtype=np.int64)


def pick(
    jobs: list[Job],
    shapes: list[Shapes],
    speeds: list[list[float]],
    level: IntArray,
    keys: FloatArray,
    room: IntArray,
    limit: int | None,
) -> tuple[list[int], dict[int, str]]:
    """The candidates in priority order, each group capped at what could run at once on its
    `room` (identical candidates start in order, so the later ones never run), then the first
    `limit`; and why every other waiting job was left out."""
    reasons: dict[int, str] = {}
    waiting = [j for j, job in enumerate(jobs) if job.placement is None]
    sortable = np.where(np.isnan(keys), np.inf, keys)
    waiting.sort(key=lambda j: (level[j], sortable[j], j))
    taken: dict[tuple[object, ...], int] = {}
    picked: list[int] = []
    for j in waiting:
        if not shapes[j]:
            reasons[j] = "no allowed shape places it on these nodes"
            continue
        key = identity(jobs[j], shapes[j], speeds[j], int(level[j]))
        if room[j] < jobs[j].scale_factor:
            reasons[j] = (
                "not started: running jobs that keep their GPUs hold every GPU it could use"
            )
            continue
        if taken.get(key, 0) >= room[j] // jobs[j].scale_factor:
            reasons[j] = "not started: identical jobs ahead of it can take every GPU it could use"
            continue
        if limit is not None and len(picked) >= limit:
            reasons[j] = f"not considered: beyond the first {limit} candidates (`candidates`)"
            continue
        taken[key] = taken.get(key, 0) + 1
        picked.append(j)
    return picked, reasons


def never_stopped(
    running: tuple[FloatArray, IntArray, FloatArray],
    best: float,
    fastest: float,
    relief: float,
    w2: float,
) -> BoolArray:
    """Stopping a running job loses W2·π_j·g_j·σ_j (its stay), and can gain at most all
    contention relieved, C·max Λ at the most a GPU's loss costs (`relief`), plus the best
    waiting candidate's value on its GPUs, W2·π·g_j·σ_max. Under SRTF the running jobs of any
    level above the waiting ones are pinned so, and a solve need not consider stopping them."""
    weight, demand, stay_speed = running
    out: BoolArray = w2 * weight * demand * stay_speed > relief + w2 * best * demand * fastest
    return out
