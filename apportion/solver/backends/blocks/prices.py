"""The max-min level LP's capacity prices from one pass over the jobs per step (FORMULATIONS
§1e), for the crossover (`vertex.py`) to turn into an optimal vertex.

The max-min LP (in the block form: minimize −t; block b's share row a_b·x_b − ω_b t ≥ 0 and
time row Σ x_b ≤ 1; capacity rows Σ_b lv_b x_b ≤ N, one per GPU type) is, where no job's
time row binds, the market

    t* = min_{p ≥ 0} p·N / Σ_b ω_b min_c p_c w_bc,     w_bc = lv_bc / a_bc

(the cost, at prices p, of one unit of a job's share on slot c; its cheapest slot holds it at
the level): at the optimal prices every priced type's demand per unit of level,
d_k(p) = Σ_b ω_b w_bc*(b) [type of c*(b) = k], is the same multiple 1/t* of its N_k. The
minimum over slots is smoothed (a soft-min of temperature τ over log costs, so τ is the
relative cost difference at which a job is torn between two types) and the equations
log(d_k / N_k) = const are solved by Newton's method on log p, with τ lowered from `START`
by factors of ten to `FINISH`: each step is one pass over the jobs and a K × K solve. The
prices are then right to about τ, and the jobs whose cheapest type wins by less than that
are the few that the crossover leaves free. Nothing here is trusted: the crossover's
pricing and the certificate decide.

Jobs whose time row binds at the level (their cheapest type would need more than all their
time: a slow job held at the level by a mix of types) are not a market's buyers of one type,
and about 0.4 % of them on a contended cluster move the prices by 1e-3, a hundred
temperatures. So at every temperature below `COARSE` the market is settled without them:
their own two-row LPs at the last prices and level (`vertex.choose`) give their use of each
type exactly, which is taken off the supply, and the level is the rest's; at the finest, again
while the time-bound jobs or the level change (`CORRECTIONS` times at most).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from apportion.solver.arraytypes import BoolArray, FloatArray, IntArray
from apportion.solver.backends.blocks.part import Part
from apportion.solver.backends.blocks.vertex import choose

START = 1e-1
FINISH = 1e-5
STEPS = 6  # Newton steps at each temperature at most
HALVINGS = 5
#: Temperatures above this are settled on a sample of `COARSE_SAMPLE` of the jobs.
COARSE = 2e-3
COARSE_SAMPLE = 0.1
COARSE_MIN = 20_000  # …with at least this many jobs; all of them below
SETTLED = 1e-3  # …fewer once the equations hold to this, relative to τ
UNDERFLOW = -60.0
#: Settles at the finest temperature with the time-bound jobs taken out, at most.
CORRECTIONS = 3
#: A job whose cheapest type needs this much of its time at the level counts as time-bound.
TIME_BOUND = 0.99


def applicable(part: Part) -> bool:
    """The max-min level LP: one linking column (t, cost < 0) that enters the share rows
    only, those with right-hand side 0; no costs on the blocks; every linking row a ≤ row
    (a capacity) met by one slot kind with positive entries."""
    if part.linking_cols != 1 or part.cost_link[0] >= 0 or np.any(part.cost != 0):
        return False
    if np.any(part.h != 0) or np.any(part.g[1] != 0) or np.any(part.rhs[:, 0] != 0):
        return False
    valid = part.valid[:, : part.slots]
    return bool(
        np.all(part.g[0][:, 0] < 0)
        and np.all(part.sig_link > 0)
        and np.all(part.rhs_link > 0)
        and np.all(part.link >= 0)
        and np.all(part.a0[valid] > 0)
        and np.all(part.lv[valid] > 0)
    )


@dataclass(frozen=True, eq=False)
class Buyers:
    """The jobs as the market sees them, slot by slot ((C, B): each slot's row contiguous, so
    that every reduction over a job's slots is a pass of elementwise operations)."""

    log_w: FloatArray  # log w_bc, +∞ where the job cannot run
    cost: FloatArray  # ω_b w_bc, 0 where it cannot
    link: IntArray  # (C,) each slot's type
    types: int

    @classmethod
    def of(cls, part: Part) -> Buyers:
        valid = part.valid[:, : part.slots].T
        with np.errstate(divide="ignore"):
            ratio = np.where(valid, part.lv.T / np.where(valid, part.a0.T, 1.0), 0.0)
            log_w = np.where(valid, np.log(ratio), np.inf)
        cost = ratio * (-part.g[0][:, 0])[None, :]
        return cls(log_w, cost, part.link, part.linking_rows)

    def take(self, at: BoolArray) -> Buyers:
        # numpy lays a column subset out job by job: copied back to slot by slot, every
        # reduction over the slots is five times faster.
        log_w, cost = (
            np.ascontiguousarray(self.log_w[:, at]),
            np.ascontiguousarray(self.cost[:, at]),
        )
        return Buyers(log_w, cost, self.link, self.types)

    def per_type(self, x: FloatArray) -> FloatArray:
        """(K, B) from (C, B): each type's sum over its slots."""
        if self.link.size == self.types and np.array_equal(self.link, np.arange(self.types)):
            return x
        out = np.zeros((self.types, x.shape[1]))
        for c, k in enumerate(self.link.tolist()):
            out[k] += x[c]
        return out

    def cheapest(self, log_p: FloatArray) -> IntArray:
        out: IntArray = np.argmin(self.log_w + log_p[self.link][:, None], axis=0)
        return out


def market_prices(part: Part) -> tuple[FloatArray, FloatArray, float] | None:
    """(y_link, t, τ): the form's linking duals and level at the market's prices, and the
    finest temperature at which Newton's method settled; None when it settles at none."""
    buyers = Buyers.of(part)
    log_p, settled = np.zeros(part.linking_rows), None
    sample = np.random.default_rng(0).random(part.blocks) < COARSE_SAMPLE
    if part.blocks < COARSE_MIN:
        sample[:] = True
    coarse = float(sample.mean()) if sample.any() else 1.0
    few = buyers.take(sample)
    tau, level = START, 0.0
    while tau >= FINISH * 0.999:
        if tau > COARSE:
            # Coarse temperatures see the market from afar: a sample of the jobs does.
            found = _settle(log_p, few, part.rhs_link * coarse, tau)
            fine = None if found is None else (found, level)
        else:
            if settled is None or settled > COARSE:
                level = _level(log_p, buyers, part.rhs_link, tau)
            fine = _fine(part, buyers, log_p, level, tau, 1)
        if fine is None:
            break  # too few jobs near the ties for so fine a temperature: keep the last
        (log_p, level), settled = fine, tau
        tau /= 10.0
    if settled is None:
        return None
    if settled > COARSE:
        level = _level(log_p, buyers, part.rhs_link, settled)
    last = _fine(part, buyers, log_p, level, settled, CORRECTIONS)
    if last is not None:
        log_p, level = last
    return -np.exp(log_p - log_p.max()), np.array([level]), settled


def _level(log_p: FloatArray, buyers: Buyers, supply: FloatArray, tau: float) -> float:
    return float(np.min(supply / _demand(log_p, buyers, tau)))


def _fine(
    part: Part, buyers: Buyers, log_p: FloatArray, level: float, tau: float, rounds: int
) -> tuple[FloatArray, float] | None:
    """(log p, level) settled at τ without the jobs time-bound at the last prices and level,
    their exact use of each type taken off the supply (see the module docstring), up to
    `rounds` times while the time-bound jobs or the level change; None when it does not
    settle."""
    a0 = np.where(part.valid[:, : part.slots], part.a0, 0.0)
    omega = -part.g[0][:, 0]
    bound = np.zeros(part.blocks, bool)
    for _ in range(rounds):
        before = bound
        reach = a0[np.arange(part.blocks), buyers.cheapest(log_p)]
        bound = omega * level >= TIME_BOUND * reach
        used = _exact_use(part, np.flatnonzero(bound), -np.exp(log_p - log_p.max()), level)
        if used is None or np.any(part.rhs_link - used <= 0):
            used, bound = np.zeros(part.linking_rows), np.zeros(part.blocks, bool)
        supply = part.rhs_link - used
        rest = buyers.take(~bound)
        found = _settle(log_p, rest, supply, tau)
        if found is None:
            return None
        log_p, previous = found, level
        level = _level(log_p, rest, supply, tau)
        if np.array_equal(bound, before) and abs(level - previous) <= 1e-12 * level:
            break
    return log_p, level


def _exact_use(part: Part, index: IntArray, y_link: FloatArray, level: float) -> FloatArray | None:
    """(L,): what the blocks `index` use of each linking row at their best basis at prices
    y_link and the level; None when one of them has no feasible basis there."""
    sub = part.take(index, 1.0)
    t = np.array([level])
    bases, gap = choose(sub, y_link, t)
    if np.any(gap < 0):
        return None
    values = bases.solve(sub, sub.rhs_at(t))[:2]
    used = np.zeros(part.linking_rows)
    rows = np.arange(index.size)
    for var, x in zip((bases.u, bases.v), values, strict=True):
        slot = var < part.slots
        link = np.where(slot, part.link[np.minimum(var, part.slots - 1)], -1)
        on = slot & (link >= 0)
        weight = sub.lv[rows[on], var[on]] * x[on]
        used += np.bincount(link[on], weights=weight, minlength=part.linking_rows)
    return used


def _settle(log_p: FloatArray, buyers: Buyers, supply: FloatArray, tau: float) -> FloatArray | None:
    """Newton's method at temperature τ from log_p, each step halved until it lowers the
    largest residual; None when it does not settle within `STEPS`."""
    k = log_p.size
    residual, jacobian = _equations(log_p, buyers, supply, tau)
    for _ in range(STEPS):
        worst = float(np.abs(residual).max())
        if worst <= SETTLED * tau:
            return log_p
        if not (np.isfinite(worst) and np.all(np.isfinite(jacobian))):
            return None  # a type no job in view can use: no market to settle
        # d is homogeneous of degree 0 in p: fix the prices' scale with one more row.
        system = np.vstack([jacobian, np.ones((1, k))])
        try:
            step = np.linalg.lstsq(system, np.append(-residual, 0.0), rcond=None)[0]
        except np.linalg.LinAlgError:
            return None
        step = _damped(step)
        for _ in range(HALVINGS):
            trial = log_p + step
            r, j = _equations(trial, buyers, supply, tau)
            if np.all(np.isfinite(r)) and np.abs(r).max() < worst:
                break
            step = step / 2
        else:
            return None
        log_p, residual, jacobian = trial, r, j
    return log_p if float(np.abs(residual).max()) <= SETTLED * tau else None


def _damped(step: FloatArray) -> FloatArray:
    """No price moves by more than a factor of e in one step."""
    top = float(np.abs(step).max(initial=0.0))
    return step if top <= 1.0 else step / top


def _choice(log_p: FloatArray, buyers: Buyers, tau: float) -> FloatArray:
    """(C, B): each job's soft-min weights over its slots at prices e^log_p."""
    z = buyers.log_w + log_p[buyers.link][:, None]
    z -= z.min(axis=0)
    z *= -1.0 / tau
    # Weights below e^-60 are nothing next to the cheapest slot's 1, and exp is three
    # times slower where it underflows.
    e = np.exp(np.maximum(z, UNDERFLOW, out=z), out=z)
    e /= e.sum(axis=0)
    return e


def _demand(log_p: FloatArray, buyers: Buyers, tau: float) -> FloatArray:
    use = _choice(log_p, buyers, tau)
    use *= buyers.cost
    out: FloatArray = buyers.per_type(use).sum(axis=1)
    return out


def _equations(
    log_p: FloatArray, buyers: Buyers, supply: FloatArray, tau: float
) -> tuple[FloatArray, FloatArray]:
    """(r, ∂r/∂log p) for r_k = log(d_k / N_k) − mean: zero at the market's prices."""
    pi = _choice(log_p, buyers, tau)
    per_type_pi = buyers.per_type(pi)  # (K, B): Π_kb
    per_type_use = buyers.per_type(pi * buyers.cost)  # (K, B): W_kb
    demand = per_type_use.sum(axis=1)
    # ∂d_l/∂log p_m = −(1/τ) Σ_b (W_lb [l = m] − W_lb Π_mb)
    jac = -(np.diag(demand) - per_type_use @ per_type_pi.T) / tau
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.log(demand / supply)
        residual = ratio - ratio.mean()
    with np.errstate(divide="ignore", invalid="ignore"):
        jr = jac / demand[:, None]
    return residual, jr - jr.mean(axis=0, keepdims=True)
