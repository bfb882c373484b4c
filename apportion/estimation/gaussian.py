"""Gaussian conditioning: a prior N(μ, Σ) over a vector, some of its entries measured with
independent noise, the posterior mean and covariance. One formula serves the profiles, the
measured pairs and the observed progress alike (scipy's Cholesky does the solve)."""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from apportion.solver.arraytypes import FloatArray


def shrunk_covariance(samples: FloatArray, shrinkage: float) -> FloatArray:
    """The samples' covariance (rows are samples) with `shrinkage` × its diagonal added: with
    fewer samples than entries the sample covariance is singular, and a share of the diagonal
    keeps every entry uncertain without changing any entry's scale."""
    centred = samples - samples.mean(axis=0)
    cov: FloatArray = centred.T @ centred / max(len(samples) - 1, 1)
    return cov + shrinkage * np.diag(np.diag(cov))


def condition(
    mean: FloatArray,
    cov: FloatArray,
    measured: np.ndarray,
    values: FloatArray,
    noise: FloatArray,
) -> tuple[FloatArray, FloatArray]:
    """The posterior of x ~ N(mean, cov) given y = x[measured] + e, e ~ N(0, diag(noise)):
    mean + K (y − mean[measured]) and cov − K cov[measured], K = cov[:, m] (cov[m, m] +
    diag(noise))⁻¹."""
    if len(measured) == 0:
        return mean, cov
    inner = cov[np.ix_(measured, measured)] + np.diag(noise)
    factor = cho_factor(inner)
    gain = cho_solve(factor, cov[measured]).T
    posterior = mean + gain @ (values - mean[measured])
    return posterior, cov - gain @ cov[measured]


def most_informative(
    cov: FloatArray, candidates: list[list[int]], noise: float, count: int
) -> list[int]:
    """Greedily, `count` of `candidates` (each a set of entries measured together) whose
    measurement removes the most variance summed over all entries."""
    chosen: list[int] = []
    current = cov
    for _ in range(min(count, len(candidates))):
        best, gain = -1, -1.0
        for c, entries in enumerate(candidates):
            if c in chosen:
                continue
            block = current[np.ix_(entries, entries)] + noise * np.eye(len(entries))
            cross = current[entries]
            removed = float(np.trace(cross.T @ cho_solve(cho_factor(block), cross)))
            if removed > gain:
                best, gain = c, removed
        chosen.append(best)
        entries = candidates[best]
        current = condition(
            np.zeros(len(cov)),
            current,
            np.array(entries),
            np.zeros(len(entries)),
            np.full(len(entries), noise),
        )[1]
    return chosen
