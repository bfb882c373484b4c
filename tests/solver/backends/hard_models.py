"""Models that take a solver longer than a test may wait: for time-limit behaviour."""

from __future__ import annotations

import numpy as np

from apportion.solver.model import CompiledModel, Model, Sense


def market_split(rows: int = 3, columns: int = 30, seed: int = 7) -> CompiledModel:
    """Cornuéjols–Dawande market split: A x + s⁺ − s⁻ = ⌊A·1 / 2⌋, x binary, minimize Σ s.

    Branch and bound needs far more than seconds at 3 × 30, while a feasible point (any x, with
    slacks) is trivial: a solver stopped by a short limit holds an incumbent it cannot prove.
    """
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 100, size=(rows, columns)).astype(float)
    b = np.floor(a.sum(axis=1) / 2)
    m = Model("market_split")
    x = m.add_variables("x", columns, upper=1.0, integer=True)
    over = m.add_variables("over", rows)
    under = m.add_variables("under", rows)
    eye = np.eye(rows)
    m.add_constraints("split", {x: a, over: eye, under: -eye}, lower=b, upper=b)
    m.set_objective({over: 1.0, under: 1.0}, Sense.MINIMIZE)
    return m.compile()
