"""Priority weights of the schedule objective: SRTF's or LAS's order, as lexicographic levels.

Keys: `srtf`, a job's remaining time (steps left over its throughput on its fastest type, or its
`remaining_time`); `las`, its attained service (seconds run so far). Smaller keys come first.
A job whose key the snapshot does not give (SRTF: neither steps left with a throughput nor a
remaining time) ranks after every job whose key it gives, in a level of its own (one of the
`levels`; with a single level every job ties): SRTF runs the work it knows to be short first,
and nothing says a job of unknown length is shorter than any known one, so it takes what the
known jobs leave (backfilling) and never displaces one of them. Ranking it with the last known
level instead would let a job that reports nothing preempt, or keep out, the longest job that
does. LAS has no unknown key: no attained service counts 0, so such a job comes first.

Levels: the distinct keys, sorted, are cut at the largest gaps between consecutive keys into at
most `levels` levels; gaps under `tolerance` seconds never cut (such keys tie). A level's weight
per GPU of full-speed progress dominates everything below it:

    π_lowest = 1,   π_L = B · π_{L+1},   B = C · σ_max / (g_min · σ_min) + 1

(C GPUs in the cluster, g_min the smallest demand, σ the speed factors of the spreads). One GPU
of a level-L job, at its slowest spread, is then worth more than every GPU of the cluster given
to lower levels at their fastest: with zero contention and no restart cost the objective's
optimum runs exactly the jobs SRTF (LAS) would, as long as its keys fit the levels (every
distinct key its own level when `levels` ≥ their number and `tolerance` = 0).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from apportion.solver.arraytypes import FloatArray, IntArray


@dataclass(frozen=True)
class Levels:
    """Each job's level (0 = first served) and the weight per GPU of each level."""

    level: IntArray
    weight: FloatArray  # per level

    @property
    def per_job(self) -> FloatArray:
        out: FloatArray = self.weight[self.level]
        return out


def priority_levels(keys: FloatArray, levels: int, tolerance: float, base: float) -> Levels:
    """Cut `keys` (smaller first; NaN: after every known key, a level of its own when `levels`
    ≥ 2) into at most `levels` levels at the largest gaps of at least `tolerance`, weighted
    lexicographically with factor `base` between levels."""
    known = np.where(np.isnan(keys), np.inf, keys)
    distinct = np.unique(known)
    if distinct.size <= 1:
        return Levels(np.zeros(keys.size, dtype=np.int64), np.ones(1))
    gaps = np.diff(distinct)
    gaps = np.where(np.isinf(gaps), np.finfo(float).max, gaps)  # unknown keys: own level
    eligible = np.flatnonzero(gaps >= max(tolerance, 0.0) if tolerance > 0 else gaps > 0)
    chosen = eligible[np.argsort(-gaps[eligible], kind="stable")][: max(levels, 1) - 1]
    cuts = distinct[np.sort(chosen) + 1]  # a level starts at each of these keys
    level = np.searchsorted(cuts, known, side="right").astype(np.int64)
    count = int(cuts.size) + 1
    weight = base ** np.arange(count - 1, -1, -1, dtype=float)
    return Levels(level, weight)


def level_base(total_gpus: int, min_demand: int, speed: FloatArray) -> float:
    """B of the module docstring."""
    fastest = float(speed.max(initial=1.0))
    slowest = float(speed.min(initial=1.0))
    return total_gpus * fastest / (max(min_demand, 1) * max(slowest, 1e-9)) + 1.0
