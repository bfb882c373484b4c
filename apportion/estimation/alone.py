"""A job's steps/s alone on each GPU type: a Gaussian over their logs, from the reference
table (a named type's row, or the spread of the reference types of its scale factor), updated
by its profiles and by the progress observed while it ran alone."""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from apportion.estimation.document import Cell, EstimateOptions, JobSpec
from apportion.estimation.gaussian import condition
from apportion.estimation.reference import Group
from apportion.solver.arraytypes import FloatArray

#: Progress summed per job, GPU type and partner (None: alone): (steps, seconds).
Seen = dict[tuple[str, str, str | None], tuple[float, float]]


@dataclass(frozen=True)
class Alone:
    """The posterior over log steps/s alone, and the GPU types known not to run the job."""

    mean: FloatArray
    cov: FloatArray
    cannot: frozenset[int]
    measured: bool

    def rate(self, g: int) -> float:
        return 0.0 if g in self.cannot else float(np.exp(self.mean[g]))

    def sigma(self, g: int) -> float:
        return 0.0 if g in self.cannot else float(np.sqrt(max(self.cov[g, g], 0.0)))


def alone_posterior(spec: JobSpec, group: Group, options: EstimateOptions, seen: Seen) -> Alone:
    """The job's prior (its named type's row with `reference_sigma`, else the reference
    types' spread) conditioned on its profiles and on the rates seen while it ran alone (a
    rate over s seconds has the relative error observation_sigma · √(observation_seconds / s);
    a rate of 0 says nothing of the level and is left out)."""
    gpus = group.gpu_types
    named = group.index(spec.job_type) if spec.job_type is not None else None
    cannot: set[int] = set()
    if named is not None:
        row = group.alone[named]
        cannot = {g for g in range(len(gpus)) if row[g] <= 0}
        mean = np.log(np.maximum(row, 1e-3))
        cov = options.reference_sigma**2 * np.eye(len(gpus))
    else:
        mean, cov = group.alone_prior()
    entries, values, noise = [], [], []
    for gpu, rate in spec.profiles.items():
        g = gpus.index(gpu)
        if rate <= 0:
            cannot.add(g)
            continue
        cannot.discard(g)
        entries.append(g)
        values.append(np.log(rate))
        noise.append(options.profile_sigma**2)
    for (job, gpu, partner), (steps, seconds) in seen.items():
        if job != spec.id or partner is not None or steps <= 0:
            continue
        g = gpus.index(gpu)
        cannot.discard(g)
        entries.append(g)
        values.append(np.log(steps / seconds))
        noise.append(options.observation_sigma**2 * options.observation_seconds / seconds)
    mean, cov = condition(mean, cov, np.array(entries, int), np.array(values), np.array(noise))
    return Alone(mean, cov, frozenset(cannot), bool(entries))


def z_score(level: float) -> float:
    return NormalDist().inv_cdf(0.5 + level / 2)


def log_cell(mean: float, sigma: float, z: float) -> Cell:
    """A rate with a relative (log) standard deviation: the interval mean · e^(∓zσ)."""
    if mean <= 0:
        return Cell(mean=0.0, sigma=0.0, low=0.0, high=0.0)
    return Cell(
        mean=mean, sigma=sigma, low=mean * np.exp(-z * sigma), high=mean * np.exp(z * sigma)
    )
