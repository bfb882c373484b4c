"""The Gittins index against its definition, computed directly on small distributions:
sup_Δ P(S − a ≤ Δ | S > a) / E[min(S − a, Δ) | S > a], over every Δ of a fine grid and every
jump of the distribution, with exact fractions."""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest

from apportion.formulations.tiresias.gittins_index import Distribution


def direct(values: list[int], weights: list[int], a: Fraction, delta: Fraction) -> Fraction:
    tail = [(Fraction(v), Fraction(w)) for v, w in zip(values, weights, strict=True) if v > a]
    mass = sum(w for _, w in tail)
    if not mass:
        return Fraction(0)
    done = sum(w for v, w in tail if v - a <= delta) / mass
    expected = sum(w * min(v - a, delta) for v, w in tail) / mass
    return done / expected


def direct_sup(values: list[int], weights: list[int], a: Fraction) -> Fraction:
    top = max(values)
    grid = {Fraction(k, 8) for k in range(1, 8 * (top + 1))}  # every eighth up to past the max
    grid |= {Fraction(v) - a for v in values if v > a}
    return max((direct(values, weights, a, d) for d in grid if d > 0), default=Fraction(0))


def test_two_point_distribution_by_hand() -> None:
    # S = 1 or 2, equally likely. At a = 0: Δ = 1 gives (1/2)/1, Δ = 2 gives 1/(3/2) = 2/3.
    # At a = 1 only S = 2 remains: Δ = 1 gives 1/1.
    dist = Distribution.of(np.array([1.0, 2.0]), np.ones(2))
    assert dist.supremum(np.array([0.0, 1.0, 2.0])) == pytest.approx([2 / 3, 1.0, 0.0])
    assert dist.index(np.array([0.0]), np.array([1.0])) == pytest.approx([0.5])
    assert dist.index(np.array([0.0]), np.array([np.inf])) == pytest.approx([2 / 3])


@pytest.mark.parametrize("seed", range(12))
def test_supremum_matches_the_definition(seed: int) -> None:
    rng = random.Random(seed)
    size = rng.randint(1, 7)
    values = [rng.randint(1, 12) for _ in range(size)]
    weights = [rng.randint(1, 4) for _ in range(size)]
    dist = Distribution.of(np.array(values, float), np.array(weights, float))
    attained = [Fraction(0), Fraction(1, 2), Fraction(3), Fraction(rng.randint(0, 13))]
    got = dist.supremum(np.array([float(a) for a in attained]))
    want = [float(direct_sup(values, weights, a)) for a in attained]
    assert got == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("seed", range(12))
def test_fixed_quantum_matches_the_definition(seed: int) -> None:
    rng = random.Random(100 + seed)
    size = rng.randint(1, 7)
    values = [rng.randint(1, 12) for _ in range(size)]
    weights = [rng.randint(1, 4) for _ in range(size)]
    dist = Distribution.of(np.array(values, float), np.array(weights, float))
    cases = [(Fraction(rng.randint(0, 10)), Fraction(rng.randint(1, 24), 2)) for _ in range(6)]
    got = dist.index(np.array([float(a) for a, _ in cases]), np.array([float(d) for _, d in cases]))
    want = [float(direct(values, weights, a, d)) for a, d in cases]
    assert got == pytest.approx(want, rel=1e-12)


def test_samples_and_histogram_agree() -> None:
    from apportion.solver.snapshot.service import HistogramBin, ServiceDistribution

    samples = ServiceDistribution(samples=[5.0, 5.0, 9.0, 40.0])
    histogram = ServiceDistribution(
        histogram=[
            HistogramBin(gpu_seconds=5.0, count=2.0),
            HistogramBin(gpu_seconds=9.0, count=1.0),
            HistogramBin(gpu_seconds=40.0, count=1.0),
        ]
    )
    a = np.array([0.0, 5.0, 20.0])
    one = Distribution.from_snapshot(samples).supremum(a)
    two = Distribution.from_snapshot(histogram).supremum(a)
    assert one == pytest.approx(two)
