"""The Gittins index of a job from a distribution of job sizes (Tiresias's 2D-Gittins).

For a job that has attained a GPU-seconds, with S the size of a job drawn from the distribution
(point masses v_i of weight w_i, sorted),

    G(a, Δ) = P(S − a ≤ Δ | S > a) / E[min(S − a, Δ) | S > a],     G(a) = sup_{Δ>0} G(a, Δ).

Between two support points P is constant and E grows with Δ, so the supremum is attained at
some Δ = v_k − a (k over the support above a, Δ → ∞ being the last one). With prefix sums over
the support, for the first index m above a,

    G_k = W(m..k) / (Σ_{i=m..k} w_i v_i − a·W(m..k) + (v_k − a)·W(k+1..n)),

one vectorized pass per job. The discretized index (the paper's) fixes Δ to the rest of the
job's queue, Δ_i = θ_{i+1} − a (∞ in the last queue, where G = 1 / E[S − a | S > a]). A job past
every sample has index 0: the distribution says nothing about it (Tiresias's simulator does the
same).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from apportion.solver.arraytypes import FloatArray
from apportion.solver.snapshot.service import ServiceDistribution

#: Jobs × support points evaluated per block of the supremum (bounds the memory of one pass).
BLOCK = 4_000_000


@dataclass(frozen=True)
class Distribution:
    """Sorted distinct support points with their weights and prefix sums."""

    values: FloatArray
    weights: FloatArray
    cum_w: FloatArray  # cum_w[i] = Σ_{l<i} w_l (length n + 1)
    cum_wv: FloatArray

    @classmethod
    def of(cls, values: FloatArray, weights: FloatArray) -> Distribution:
        support, where = np.unique(values, return_inverse=True)
        merged = np.bincount(where, weights=weights, minlength=support.size).astype(float)
        zero = np.zeros(1)
        return cls(
            support,
            merged,
            np.concatenate([zero, np.cumsum(merged)]),
            np.concatenate([zero, np.cumsum(merged * support)]),
        )

    @classmethod
    def from_snapshot(cls, part: ServiceDistribution) -> Distribution:
        if part.samples is not None:
            values = np.asarray(part.samples, dtype=float)
            return cls.of(values, np.ones(values.size))
        bins = part.histogram or []
        return cls.of(
            np.array([b.gpu_seconds for b in bins], dtype=float),
            np.array([b.count for b in bins], dtype=float),
        )

    @property
    def size(self) -> int:
        return int(self.values.size)

    def index(self, attained: FloatArray, quantum: FloatArray) -> FloatArray:
        """G(a, Δ) per job for its own Δ (∞ allowed)."""
        v, n = self.values, self.size
        m = np.searchsorted(v, attained, side="right")
        k = np.searchsorted(v, attained + quantum, side="right")  # first beyond a + Δ
        total = self.cum_w[n] - self.cum_w[m]
        done = self.cum_w[k] - self.cum_w[m]
        served = self.cum_wv[k] - self.cum_wv[m] - attained * done
        rest = np.where(np.isinf(quantum), 0.0, np.where(k < n, quantum, 0.0))
        expected = served + rest * (self.cum_w[n] - self.cum_w[k])
        with np.errstate(divide="ignore", invalid="ignore"):
            index = np.where((total > 0) & (expected > 0), done / expected, 0.0)
        return np.asarray(index, dtype=float)

    def supremum(self, attained: FloatArray) -> FloatArray:
        """G(a) = sup over every Δ > 0, per job."""
        out = np.zeros(attained.size)
        step = max(1, BLOCK // max(self.size, 1))
        for lo in range(0, attained.size, step):
            out[lo : lo + step] = self._supremum(attained[lo : lo + step])
        return out

    def _supremum(self, a: FloatArray) -> FloatArray:
        v, n = self.values, self.size
        m = np.searchsorted(v, a, side="right")
        cw, cwv = self.cum_w, self.cum_wv
        # Rows: jobs; columns: k (support index); only k ≥ m count.
        k = np.arange(n)
        done = cw[None, k + 1] - cw[m][:, None]
        served = cwv[None, k + 1] - cwv[m][:, None] - a[:, None] * done
        beyond = cw[n] - cw[None, k + 1]
        expected = served + (v[None, :] - a[:, None]) * beyond
        valid = k[None, :] >= m[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(valid & (expected > 0), done / expected, 0.0)
        return np.asarray(ratio.max(axis=1, initial=0.0), dtype=float)
