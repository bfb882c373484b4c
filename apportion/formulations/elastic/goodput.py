"""Goodput of a data-parallel job in a configuration (FORMULATIONS §9a): the throughput model of
Pollux (OSDI'21), which Sia (SOSP'23) fits per GPU type, times the statistical efficiency of its
global batch.

A job runs R replicas (GPUs) on N nodes, each with a micro-batch of b samples and s
gradient-accumulation steps, so its global batch is M = R·b·(s + 1); its initial batch is M0.

- compute per micro-batch: T_c(b) = α_c + β_c·b;
- all-reduce: T_n = α_n + β_n·max(R − 2, ε) when N > 1, α_r + β_r·max(R − 2, ε) when N = 1 and
  R > 1, and ε (no communication) for R = 1, ε = 1e-8;
- a step overlaps the last micro-batch with the all-reduce: T_s = (T_c^γ + T_n^γ)^(1/γ),
  1 ≤ γ ≤ 10; one optimizer step takes T_iter = s·T_c + T_s;
- throughput X = M / T_iter samples/s;
- statistical efficiency, from the gradient noise (|g|² = `grad_sqr`, tr Σ = `grad_var`, both
  measured at M0): with k = M/M0, the gain of a step is r = (var + sqr)/(var/k + sqr) ∈ [1, k],
  and E(M) = r/k = (B + M0)/(B + M), B = M0·var/sqr;
- goodput = X·E(M) samples/s counted at the efficiency of M0; a job progresses r/T_iter
  M0-steps per second.

`best_batch` chooses M as Pollux and Sia do: the goodput at 50 geometrically spaced global batches
between max(M0, R·b_min) and M_max, each split into micro-batches no larger than b_max (with at
least one accumulation step for a single GPU above M0), keeping the best.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from apportion.solver.arraytypes import FloatArray, IntArray

EPSILON = 1e-8  # the network time of a single replica, and the floor of a retrogression term
BATCH_POINTS = 50  # global batch sizes tried per configuration
ROUNDING = 1e-8  # tolerance of the ceilings that split a batch into micro-batches


@dataclass(frozen=True)
class PerfParams:
    """The seven parameters of the throughput model (seconds; γ dimensionless)."""

    alpha_c: float
    beta_c: float
    alpha_n: float
    beta_n: float
    alpha_r: float
    beta_r: float
    gamma: float

    def as_array(self) -> FloatArray:
        return np.array(
            [
                self.alpha_c,
                self.beta_c,
                self.alpha_n,
                self.beta_n,
                self.alpha_r,
                self.beta_r,
                self.gamma,
            ]
        )

    @classmethod
    def from_array(cls, values: ArrayLike) -> PerfParams:
        a = np.asarray(values, dtype=float)
        return cls(*(float(v) for v in a))


def compute_time(params: PerfParams, local_batch: ArrayLike) -> FloatArray:
    """T_c: forward and backward pass of one micro-batch."""
    return params.alpha_c + params.beta_c * np.asarray(local_batch, dtype=float)


def network_time(params: PerfParams, nodes: ArrayLike, replicas: ArrayLike) -> FloatArray:
    """T_n: the all-reduce over the slowest link the replicas use."""
    n = np.asarray(nodes, dtype=float)
    r = np.asarray(replicas, dtype=float)
    inter, intra = n > 1, r > 1
    alpha = np.where(inter, params.alpha_n, np.where(intra, params.alpha_r, EPSILON))
    beta = np.where(inter, params.beta_n, np.where(intra, params.beta_r, EPSILON))
    out: FloatArray = alpha + beta * np.maximum(r - 2, EPSILON)
    return out


def sync_step_time(params: PerfParams, compute: FloatArray, network: FloatArray) -> FloatArray:
    """T_s = (T_c^γ + T_n^γ)^(1/γ): the last micro-batch overlapped with the all-reduce."""
    g = params.gamma
    out: FloatArray = (compute**g + network**g) ** (1.0 / g)
    return out


def iteration_time(
    params: PerfParams,
    nodes: ArrayLike,
    replicas: ArrayLike,
    local_batch: ArrayLike,
    accumulation: ArrayLike = 0,
) -> FloatArray:
    """T_iter = s·T_c + T_s: seconds per optimizer step."""
    tc = compute_time(params, local_batch)
    ts = sync_step_time(params, tc, network_time(params, nodes, replicas))
    out: FloatArray = np.asarray(accumulation, dtype=float) * tc + ts
    return out


def throughput(
    params: PerfParams,
    nodes: ArrayLike,
    replicas: ArrayLike,
    local_batch: ArrayLike,
    accumulation: ArrayLike = 0,
) -> FloatArray:
    """X = R·b·(s + 1) / T_iter, samples per second."""
    r = np.asarray(replicas, dtype=float)
    b = np.asarray(local_batch, dtype=float)
    s = np.asarray(accumulation, dtype=float)
    out: FloatArray = r * b * (s + 1) / iteration_time(params, nodes, replicas, b, s)
    return out


def gain(batch: ArrayLike, init_batch: float, grad_sqr: float, grad_var: float) -> FloatArray:
    """r(M) = (var + sqr)/(var/k + sqr), k = M/M0: M0-steps of progress per step at M."""
    k = np.asarray(batch, dtype=float) / init_batch
    denominator = grad_var / k + grad_sqr
    safe = np.where(denominator > 0, denominator, 1.0)
    out: FloatArray = np.where(denominator > 0, (grad_var + grad_sqr) / safe, 1.0)
    return out


def efficiency(batch: ArrayLike, init_batch: float, grad_sqr: float, grad_var: float) -> FloatArray:
    """E(M) = r(M)/k: the fraction of each sample's value kept at batch M (1 at M0)."""
    k = np.asarray(batch, dtype=float) / init_batch
    out: FloatArray = gain(batch, init_batch, grad_sqr, grad_var) / k
    return out


@dataclass(frozen=True)
class JobModel:
    """What a scheduler knows of one job on one GPU type: the fitted throughput model, the
    latest gradient statistics and the batch limits."""

    params: PerfParams
    init_batch: float  # M0
    max_batch: float  # M_max
    grad_sqr: float
    grad_var: float
    min_local_batch: float  # b_min
    max_local_batch: float  # b_max on this GPU type
    scale: float = 1.0  # multiplies the throughput (calibration, projection to another type)

    def goodput(
        self,
        nodes: ArrayLike,
        replicas: ArrayLike,
        local_batch: ArrayLike,
        accumulation: ArrayLike = 0,
    ) -> FloatArray:
        """X·E(M): samples per second at the initial batch's efficiency."""
        x = throughput(self.params, nodes, replicas, local_batch, accumulation) * self.scale
        batch = np.multiply(replicas, local_batch) * (np.asarray(accumulation, dtype=float) + 1)
        out: FloatArray = x * efficiency(batch, self.init_batch, self.grad_sqr, self.grad_var)
        return out


@dataclass(frozen=True)
class BatchChoice:
    """The best batch per configuration (arrays aligned with the configurations asked for);
    goodput 0 where no batch size is valid."""

    goodput: FloatArray  # samples/s at M0-efficiency
    throughput: FloatArray  # samples/s
    local_batch: IntArray  # b
    accumulation: IntArray  # s
    batch: IntArray  # M = R·b·(s + 1)


def split_batch(
    batch: FloatArray, replicas: FloatArray, init_batch: float, max_local: float
) -> tuple[IntArray, IntArray]:
    """Micro-batch b and accumulation steps s for a global batch over R replicas: the fewest
    steps whose micro-batch fits b_max, and at least one step for a single replica above M0
    (its gradient statistics need two micro-batches)."""
    local = batch / replicas
    steps = np.ceil(local / max_local - ROUNDING) - 1
    single = (replicas == 1) & (local > init_batch + ROUNDING)
    steps = np.where(single, np.maximum(steps, 1), steps).astype(np.int64)
    micro = np.ceil(local / (steps + 1) - ROUNDING).astype(np.int64)
    return micro, steps


def best_batch(model: JobModel, nodes: ArrayLike, replicas: ArrayLike) -> BatchChoice:
    """For each configuration (N, R), the global batch of highest goodput (see the module)."""
    n = np.atleast_1d(np.asarray(nodes, dtype=float))
    r = np.atleast_1d(np.asarray(replicas, dtype=float))
    low = np.maximum(model.init_batch, model.min_local_batch * r)
    high = np.maximum(low, model.max_batch)
    # (points, configurations): geometric spacing, as Pollux's np.geomspace
    fraction = np.linspace(0.0, 1.0, BATCH_POINTS)[:, None]
    batch = low * (high / low) ** fraction
    micro, steps = split_batch(batch, r[None, :], model.init_batch, model.max_local_batch)
    value = model.goodput(n[None, :], r[None, :], micro, steps)
    valid = (
        (micro >= model.min_local_batch)
        & (micro <= model.max_local_batch)
        & (low <= model.max_batch)
    )
    value = np.where(valid, value, 0.0)
    best = np.argmax(value, axis=0)
    cols = np.arange(r.size)
    b, s = micro[best, cols], steps[best, cols]
    rate = throughput(model.params, n, r, b, s) * model.scale
    good = value[best, cols]
    return BatchChoice(
        goodput=good,
        throughput=np.where(good > 0, rate, 0.0),
        local_batch=np.where(good > 0, b, 0),
        accumulation=np.where(good > 0, s, 0),
        batch=np.where(good > 0, (r * b * (s + 1)).astype(np.int64), 0),
    )
