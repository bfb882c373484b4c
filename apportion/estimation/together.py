"""A new job's co-location ratios, completed from a few measured pairs (Gavel's throughput
estimator, with the matrix completion as a Gaussian conditioned on what was measured: the
posterior mean completes the row, the posterior variance is each cell's uncertainty).

The job's row (`reference.Group.row`) has the ratios it suffers beside each reference type and
inflicts on it, per GPU type, and its log steps/s alone; its prior is the reference types'
rows' Gaussian, and every measurement is an entry of the row: a pair profile gives two (what
each member kept of its rate alone), progress seen beside a job of a reference type one, and
the rates alone three more."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from apportion.estimation.alone import Alone, Seen
from apportion.estimation.document import EstimateOptions, JobSpec, Suggestion
from apportion.estimation.gaussian import condition, most_informative
from apportion.estimation.reference import Group
from apportion.solver.arraytypes import FloatArray

#: A typical ratio, for the noise of a suggested pair's measurement.
TYPICAL_RATIO = 0.6


@dataclass(frozen=True)
class Row:
    """A new job's completed row: the posterior mean and covariance, and what it measured."""

    mean: FloatArray
    cov: FloatArray
    measured: frozenset[tuple[int, int]]  # (GPU type, reference type) pairs with a value

    def ratio(self, entry: int) -> tuple[float, float]:
        """The mean (within [0, 1]) and standard deviation of one ratio."""
        return float(np.clip(self.mean[entry], 0.0, 1.0)), float(
            np.sqrt(max(self.cov[entry, entry], 0.0))
        )


@dataclass(frozen=True)
class Measured:
    entries: list[int]
    values: list[float]
    noise: list[float]
    pairs: set[tuple[int, int]]

    def add(self, entry: int, value: float, relative: float) -> None:
        self.entries.append(entry)
        self.values.append(value)
        # An absolute floor: a ratio of 0 (cannot share) is still measured with some noise.
        self.noise.append((relative * max(value, 0.05)) ** 2)


def complete_row(
    spec: JobSpec,
    alone: Alone,
    group: Group,
    prior: tuple[FloatArray, FloatArray],
    typed: dict[str, int],
    seen: Seen,
    options: EstimateOptions,
) -> Row:
    """The job's row given its pair profiles, the progress seen beside jobs of reference
    types (`typed`: job id → its reference type), and its rates alone once measured."""
    got = Measured([], [], [], set())
    gpus = group.gpu_types
    if alone.measured:
        for g in range(len(gpus)):
            if g not in alone.cannot:
                got.entries.append(group.alone_entry(g))
                got.values.append(float(alone.mean[g]))
                got.noise.append(float(alone.cov[g, g]) + 1e-6)
    for profile in spec.pair_profiles:
        g, k = gpus.index(profile.gpu_type), group.names.index(profile.partner)
        mine, theirs = profile.throughput
        got.add(group.suffers(g, k), _ratio(mine, alone.rate(g)), options.profile_sigma)
        got.add(group.inflicts(g, k), _ratio(theirs, group.alone[k, g]), options.profile_sigma)
        got.pairs.add((g, k))
    for (job, gpu, partner), (steps, seconds) in seen.items():
        relative = options.observation_sigma * np.sqrt(options.observation_seconds / seconds)
        g = gpus.index(gpu)
        if job == spec.id and partner in typed:
            k = typed[partner]
            got.add(group.suffers(g, k), _ratio(steps / seconds, alone.rate(g)), relative)
            got.pairs.add((g, k))
        elif partner == spec.id and job in typed:
            k = typed[job]
            got.add(group.inflicts(g, k), _ratio(steps / seconds, group.alone[k, g]), relative)
            got.pairs.add((g, k))
    mean, cov = condition(
        prior[0], prior[1], np.array(got.entries, int), np.array(got.values), np.array(got.noise)
    )
    return Row(mean, cov, frozenset(got.pairs))


def nearest(row: FloatArray, group: Group) -> int:
    """The reference type whose ratios are closest to the row's (Gavel's match of a new job
    to a reference job; here by Euclidean distance over the ratios)."""
    width = group.alone_entry(0)
    rows = np.array([group.row(i)[:width] for i in range(group.size)])
    return int(np.argmin(((rows - row[:width]) ** 2).sum(axis=1)))


def suggest(row: Row, group: Group, options: EstimateOptions) -> list[Suggestion]:
    """The pairs (reference type, GPU type) not measured yet whose profile would remove the
    most variance from the row (greedy, `options.suggestions` of them)."""
    open_pairs = [
        (g, k)
        for g in range(len(group.gpu_types))
        for k in range(group.size)
        if (g, k) not in row.measured and group.alone[k, g] > 0
    ]
    candidates = [[group.suffers(g, k), group.inflicts(g, k)] for g, k in open_pairs]
    noise = (options.profile_sigma * TYPICAL_RATIO) ** 2
    picked = most_informative(row.cov, candidates, noise, options.suggestions)
    return [
        Suggestion(
            partner=group.names[open_pairs[c][1]], gpu_type=group.gpu_types[open_pairs[c][0]]
        )
        for c in picked
    ]


def _ratio(together: float, alone: float) -> float:
    return together / alone if alone > 0 else 0.0
