"""The reference table: job types profiled offline, alone and in pairs, on every GPU type
(Gavel's table, bundled, or the caller's in the same form), read as the two priors the
estimates start from.

- Alone: the log of each type's steps/s per GPU type. A new job's prior is the Gaussian of the
  reference types of its scale factor (mean, shrunk covariance): wide in level, narrower in the
  ratios between GPU types, which is what lets one measured type move the others.
- Together: Gavel's co-location ratio r[a, b, g] = a's steps/s beside b on g ÷ a's alone. A
  job's *row* is what it suffers beside each reference type, what it inflicts on it (both per
  GPU type) and its log steps/s alone; the reference types' rows give a Gaussian over rows
  (Paragon's and Gavel's fingerprinting: jobs that interfere alike with a few reference jobs
  interfere alike with the rest), and a new job's row is completed from the few entries
  measured.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from apportion.estimation.gaussian import shrunk_covariance
from apportion.refdata.gavel import GavelTable
from apportion.refdata.synthetic import load_gavel_table
from apportion.solver.arraytypes import FloatArray

#: With fewer reference types than this, the table cannot tell its own spread: the priors'
#: variances are at least `WIDE_RATIO`² for a co-location ratio and `WIDE_LOG`² for a log rate.
FEW = 3
WIDE_RATIO = 0.5
WIDE_LOG = 2.0
#: The share of each entry's variance added to the reference covariance (`shrunk_covariance`);
#: chosen on Gavel's table by leave-one-type-out (docs/ESTIMATION.md has the sweep).
SHRINKAGE = 0.02


@dataclass(frozen=True)
class Group:
    """The reference types of one scale factor (pairs exist only within one)."""

    scale_factor: int
    names: tuple[str, ...]
    alone: FloatArray  # (types, GPU types): steps/s alone, 0 = cannot run
    ratio: FloatArray  # (types, types, GPU types): r[a, b, g]
    gpu_types: tuple[str, ...]

    @property
    def size(self) -> int:
        return len(self.names)

    def index(self, name: str) -> int | None:
        return self.names.index(name) if name in self.names else None

    def row(self, i: int) -> FloatArray:
        """Type i's row: suffers (g, k), inflicts (g, k), log steps/s alone (g)."""
        return np.concatenate(
            [self.ratio[i].T.ravel(), self.ratio[:, i].T.ravel(), _log(self.alone[i])]
        )

    def suffers(self, g: int, k: int) -> int:
        return g * self.size + k

    def inflicts(self, g: int, k: int) -> int:
        return (len(self.gpu_types) + g) * self.size + k

    def alone_entry(self, g: int) -> int:
        return 2 * len(self.gpu_types) * self.size + g

    def prior(self, leave_out: int | None = None) -> tuple[FloatArray, FloatArray]:
        """The Gaussian over rows fitted to the reference types (all, or all but one: then
        its columns are left out too, as if the type had never been profiled)."""
        keep = [i for i in range(self.size) if i != leave_out]
        group = self if leave_out is None else self.without(leave_out)
        rows = np.array([group.row(i) for i in range(len(keep))])
        mean, cov = rows.mean(axis=0), shrunk_covariance(rows, SHRINKAGE)
        if len(rows) < FEW:
            floor = np.full(len(mean), WIDE_RATIO**2)
            floor[group.alone_entry(0) :] = WIDE_LOG**2
            cov = cov + np.diag(np.maximum(floor - np.diag(cov), 0.0))
        return mean, cov

    def without(self, i: int) -> Group:
        keep = [k for k in range(self.size) if k != i]
        return Group(
            self.scale_factor,
            tuple(self.names[k] for k in keep),
            self.alone[keep],
            self.ratio[np.ix_(keep, keep)],
            self.gpu_types,
        )

    def alone_prior(self) -> tuple[FloatArray, FloatArray]:
        """The Gaussian of log steps/s alone over the types that run on every GPU type."""
        runs = self.alone[(self.alone > 0).all(axis=1)]
        if len(runs) < FEW:
            # Too few types that run everywhere: a level of 1 step/s, known to within e^±4.
            width = len(self.gpu_types)
            mean = np.log(runs).mean(axis=0) if len(runs) else np.zeros(width)
            return mean, WIDE_LOG**2 * np.eye(width)
        logs = np.log(runs)
        return logs.mean(axis=0), shrunk_covariance(logs, SHRINKAGE)


@dataclass(frozen=True)
class Reference:
    """A reference table by scale factor."""

    name: str
    gpu_types: tuple[str, ...]
    groups: dict[int, Group]

    def group(self, scale_factor: int) -> Group | None:
        return self.groups.get(scale_factor)


def from_table(table: GavelTable, name: str) -> Reference:
    """The table's job types, grouped by scale factor, with their pair ratios (0 where the
    table has no pair or either member cannot run)."""
    groups: dict[int, Group] = {}
    for sf in sorted({jt[1] for jt in table.job_types}):
        kinds = [jt for jt in table.job_types if jt[1] == sf]
        at = {jt: i for i, jt in enumerate(kinds)}
        alone = np.array([table.isolated[table.job_types.index(jt)] for jt in kinds], float)
        ratio = np.zeros((len(kinds), len(kinds), len(table.gpu_types)))
        for (a, b), per in table.pairs.items():
            if a not in at or b not in at:
                continue
            for g, gpu in enumerate(table.gpu_types):
                ta, tb = per.get(gpu, (0.0, 0.0))
                ratio[at[a], at[b], g] = _ratio(ta, alone[at[a], g])
                ratio[at[b], at[a], g] = _ratio(tb, alone[at[b], g])
        groups[sf] = Group(sf, tuple(m for m, _ in kinds), alone, ratio, table.gpu_types)
    return Reference(name, table.gpu_types, groups)


@cache
def bundled() -> Reference:
    """Gavel's table (its simulator's throughputs), as the package ships it."""
    return from_table(load_gavel_table(), "gavel")


def user_table(document: dict[str, Any]) -> Reference:
    """A table in the bundled file's form: `{gpu_types, job_types: [{model, scale_factor,
    throughput}], pairs: [{a, b, throughput: {gpu: [a's, b's]}}]}`."""
    table = GavelTable.from_compact(json.loads(json.dumps(document)))
    if not table.gpu_types or not table.job_types:
        raise ValueError("it needs at least one GPU type and one job type")
    try:
        rates = np.asarray(table.isolated, dtype=float)
    except (TypeError, ValueError):
        rates = np.array([np.nan])
    if not np.isfinite(rates).all() or (rates < 0).any():
        raise ValueError("every throughput must be a number ≥ 0")
    return from_table(table, "user")


def _ratio(together: float, alone: float) -> float:
    return min(max(together / alone, 0.0), 1.0) if alone > 0 else 0.0


def _log(values: FloatArray) -> FloatArray:
    # A type that cannot run on a GPU type (0 steps/s) reads as a very slow one for the fit.
    return np.asarray(np.log(np.maximum(values, 1e-3)), dtype=float)
