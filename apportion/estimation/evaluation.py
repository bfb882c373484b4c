"""Leave one job type out of a reference table, estimate it as a new job from its rates alone
and a few measured pairs, and score its other pairs against the table: how far the estimate
is, how far the naive guess is (each cell the reference types' mean co-location ratio beside
the same partner, times the rate alone), and how far Gavel's rule is (the pairs of the
reference type nearest the completed row, as they are)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from apportion.estimation.document import EstimateOptions
from apportion.estimation.posterior import estimate
from apportion.refdata.gavel import GavelTable, JobType

NEW = "new"


@dataclass(frozen=True)
class Held:
    """One type held out: the relative errors of its unmeasured pair cells."""

    job_type: str
    measured: list[tuple[str, str]]  # (partner, GPU type)
    errors: list[float]
    naive: list[float]
    matched: list[float]  # Gavel's rule: the row of the nearest reference type, as it is
    covered: int  # cells whose truth lies in the estimate's [low, high]


def leave_one_out(
    table: GavelTable,
    scale_factor: int = 1,
    measured: int = 3,
    options: EstimateOptions | None = None,
) -> list[Held]:
    """Every type of `scale_factor` held out in turn; its `measured` pairs are the ones the
    estimator suggests (the rest of its row is what is scored)."""
    kinds = [jt for jt in table.job_types if jt[1] == scale_factor]
    options = (options or EstimateOptions.model_validate({})).model_copy(
        update={"suggestions": measured}
    )
    return [_held(table, kind, kinds, options) for kind in kinds]


def _held(table: GavelTable, kind: JobType, kinds: list[JobType], options: EstimateOptions) -> Held:
    rest = [k for k in kinds if k != kind]
    reduced = _without(table, kind).to_compact()
    alone = {g: r for g, r in table.throughput(kind).items()}
    new = {"id": NEW, "scale_factor": kind[1], "profiles": alone}
    first = estimate({"reference": reduced, "jobs": [new], "pairs": False, "options": options})
    profiles = []
    for s in first.jobs[NEW].suggested:
        mine, theirs = _together(table, kind, (s.partner, kind[1]), s.gpu_type)
        profiles.append(
            {"partner": s.partner, "gpu_type": s.gpu_type, "throughput": [mine, theirs]}
        )
    others = [{"id": m, "job_type": m, "scale_factor": sf} for m, sf in rest]
    final = estimate(
        {
            "reference": reduced,
            "jobs": [{**new, "pair_profiles": profiles}, *others],
            "options": options,
        }
    )
    done = {(s.partner, s.gpu_type) for s in first.jobs[NEW].suggested}
    errors, naive, matched, covered = [], [], [], 0
    near = (final.jobs[NEW].nearest or "", kind[1])
    for pair in final.pairs:
        if NEW not in (pair.a, pair.b):
            continue
        partner = pair.b if pair.a == NEW else pair.a
        for gpu, cells in pair.throughput.items():
            if (partner, gpu) in done:
                continue
            mine, theirs = _together(table, kind, (partner, kind[1]), gpu)
            got = cells if pair.a == NEW else cells[::-1]
            guess = _naive(table, rest, kind, (partner, kind[1]), gpu)
            match = _matched(table, kind, near, (partner, kind[1]), gpu)
            for truth, cell, plain, as_near in zip((mine, theirs), got, guess, match, strict=True):
                if truth > 0:
                    errors.append(abs(cell.mean - truth) / truth)
                    naive.append(abs(plain - truth) / truth)
                    matched.append(abs(as_near - truth) / truth)
                    covered += cell.low <= truth <= cell.high
    return Held(kind[0], sorted(done), errors, naive, matched, covered)


def _matched(
    table: GavelTable, kind: JobType, near: JobType, partner: JobType, gpu: str
) -> tuple[float, float]:
    """Gavel's estimate of a pair: the ratios of the matched reference type's pair, times the
    rates alone."""
    mine, theirs = _together(table, near, partner, gpu)
    own = table.throughput(near).get(gpu, 0.0)
    return (
        mine / own * table.throughput(kind).get(gpu, 0.0) if own > 0 else 0.0,
        theirs,
    )


def _together(table: GavelTable, a: JobType, b: JobType, gpu: str) -> tuple[float, float]:
    if (a, b) in table.pairs:
        return table.pairs[(a, b)][gpu]
    theirs, mine = table.pairs[(b, a)][gpu]
    return mine, theirs


def _naive(
    table: GavelTable, rest: list[JobType], kind: JobType, partner: JobType, gpu: str
) -> tuple[float, float]:
    """The mean ratio the reference types keep beside `partner`, and `partner` keeps beside
    them, times the rates alone."""
    suffered, inflicted = [], []
    for k in rest:
        mine, theirs = _together(table, k, partner, gpu)
        suffered.append(mine / table.throughput(k)[gpu] if table.throughput(k).get(gpu) else 0.0)
        inflicted.append(
            theirs / table.throughput(partner)[gpu] if table.throughput(partner).get(gpu) else 0.0
        )
    own = table.throughput(kind).get(gpu, 0.0)
    return float(np.mean(suffered)) * own, float(np.mean(inflicted)) * table.throughput(
        partner
    ).get(gpu, 0.0)


def _without(table: GavelTable, kind: JobType) -> GavelTable:
    keep = [i for i, jt in enumerate(table.job_types) if jt != kind]
    pairs: dict[Any, Any] = {ab: per for ab, per in table.pairs.items() if kind not in ab}
    return GavelTable(
        table.gpu_types, tuple(table.job_types[i] for i in keep), table.isolated[keep], pairs
    )
