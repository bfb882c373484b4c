"""Crossover: an optimal vertex of a block-shaped LP with two rows per block, from
near-optimal linking prices (FORMULATIONS §1e).

At prices y for the linking rows and the linking columns t at a value, each block's own LP is
a two-row LP: its best basis is found by trying every pair of its variables (one pass over the
blocks per pair). At an optimal vertex of the whole LP every block sits at such a basis, its
basic values affine in t. So, from the interior point's prices and level, stopped early:

1. every block fixed at its best basis at those prices, except those whose best basis wins by
   less than `MARGIN` (relative) or that have none: they stay free;
2. the restricted master (`master.py`): the fixed blocks through their basic values
   α_b + β_b t, the free ones whole, solved by the simplex to a vertex with its duals y;
3. pricing at y, one pass: a fixed block whose basic values left their bounds at the
   master's t, or one of whose variables has a negative reduced cost, is freed. When none is,
   x and y are primal and dual feasible for the whole LP with equal objectives (each block's
   reduced costs are its own optimality conditions; the master's are the linking columns'
   and the free blocks'), so x is an optimal vertex. Else back to 2: every round frees at least
   one block and relaxes the master, so the rounds end.

The caller then certifies x and y on the model itself, as it does every answer of the
interior point; rounds that do not end within `MAX_ROUNDS`, or free more than `MAX_FREE` of
the blocks, answer None.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, replace

import numpy as np

from apportion.solver.arraytypes import BoolArray, FloatArray
from apportion.solver.backends.blocks import duals
from apportion.solver.backends.blocks.form import BlockForm
from apportion.solver.backends.blocks.master import (
    MasterAnswer,
    affine,
    simplex_settings,
    solve_master,
)
from apportion.solver.backends.blocks.part import Bases, Part, of_form

MAX_ROUNDS = 40
#: Blocks whose best basis wins by less than this, relative, start free.
MARGIN = 1e-4
#: A master with more free blocks than this fraction (and `MIN_FREE`) is the general LP again.
MAX_FREE = 0.01
MIN_FREE = 500
#: Relative tolerances of the pricing: far tighter than the certificate's 1e-9.
PRIMAL_TOL = 1e-11
DUAL_TOL = 1e-11


@dataclass(frozen=True, eq=False)
class Vertex:
    x: FloatArray  # the form's x
    y_loc: FloatArray  # (B, 2)
    y_link: FloatArray  # (L,)
    rounds: int
    freed: int  # free blocks in the last master


@dataclass(frozen=True, eq=False)
class Answer:
    bases: Bases
    free: BoolArray
    master: MasterAnswer
    rounds: int


def applicable(form: BlockForm) -> bool:
    return form.rows == 2 and form.slots >= 1


def crossover(
    form: BlockForm,
    y_link: FloatArray,
    t: FloatArray,
    threads: int | None,
    deadline: float | None,
    margin: float = 0.0,
    market: bool = False,
) -> Vertex | None:
    """An optimal vertex of the (unscaled) `form` from near-optimal prices y_link and level
    t (the interior point's, stopped early, or the `market`'s for max-min's level LP), or
    None."""
    part = of_form(form)
    bases, gap = choose_level(part, y_link, t) if market else choose(part, y_link, t)
    answer = _rounds(part, bases, gap < max(margin, MARGIN), threads, deadline)
    if answer is None:
        return None
    return assemble(form, part, answer)


def _rounds(
    part: Part,
    bases: Bases,
    free: BoolArray,
    threads: int | None,
    deadline: float | None,
) -> Answer | None:
    limit = max(MIN_FREE, int(MAX_FREE * part.blocks))
    for rounds in range(1, MAX_ROUNDS + 1):
        if int(free.sum()) > limit:
            return None
        left = None if deadline is None else deadline - time.perf_counter()
        if left is not None and left <= 0:
            return None
        pieces = affine(part, bases)
        settings = simplex_settings(threads, left)
        master = solve_master(part, bases, pieces, free, settings)
        if master is None:
            return None
        values = pieces.at(master.t)
        wrong = ~free & out_of_bounds(part, bases, values)
        if wrong.any():
            free = free | wrong
            continue
        wrong = ~free & violated(part, bases, values, master.y_link)
        if wrong.any():
            # The master's prices are one extreme of its optimal face: look for prices in
            # that face under which every fixed block stays optimal (`duals.py`).
            settled = duals.settle(part, bases, free, master, DUAL_TOL, settings)
            if settled is not None:
                master = replace(master, y_link=settled.y_link, y_free=settled.y_free)
                wrong = settled.wrong
        if not wrong.any():
            return Answer(bases, free, master, rounds)
        free = free | wrong
    return None


def choose(part: Part, y_link: FloatArray, t: FloatArray) -> tuple[Bases, FloatArray]:
    """Each block's cheapest feasible basis at prices y_link and level t (its own two-row
    LP, by trying every pair of its variables), and by how much, relative, the next best
    costs more (−1: no feasible basis; 0: a tie)."""
    b, v = part.blocks, part.slots + 2
    q = part.priced(y_link)
    rhs = part.rhs_at(t)
    best, second = np.full(b, np.inf), np.full(b, np.inf)
    bu, bv = np.full(b, -1), np.full(b, -1)
    tol = PRIMAL_TOL * (1.0 + np.abs(rhs).max(axis=1))
    for u, w in itertools.combinations(range(v), 2):
        pair = Bases(np.full(b, u), np.full(b, w))
        xu, xw, regular = pair.solve(part, rhs)
        ok = regular & part.valid[:, u] & part.valid[:, w]
        ok &= (xu >= -tol) & (xw >= -tol)
        ok &= (xu <= part.upper[:, u] + tol) & (xw <= part.upper[:, w] + tol)
        value = np.where(ok, q[:, u] * xu + q[:, w] * xw, np.inf)
        better = value < best
        second = np.where(better, best, np.minimum(second, value))
        best = np.where(better, value, best)
        bu = np.where(better, u, bu)
        bv = np.where(better, w, bv)
    feasible = np.isfinite(best)
    alone = feasible & ~np.isfinite(second)  # one feasible basis: nothing to be torn between
    spread = np.where(alone, 1.0, np.maximum(np.abs(best), np.abs(second)))
    with np.errstate(invalid="ignore"):  # ∞ − ∞ where no basis is feasible: not read
        ahead = np.where(alone, 1.0, second - best)
    gap = np.where(feasible, ahead / np.where(spread > 0, spread, 1.0), -1.0)
    return Bases(np.where(feasible, bu, 0), np.where(feasible, bv, 1)), gap


def choose_level(part: Part, y_link: FloatArray, t: FloatArray) -> tuple[Bases, FloatArray]:
    """`choose` for max-min's level LP (`prices.applicable`), where a job that reaches the
    level on its cheapest slot c within its time has the basis (x_c, its time row's slack):
    without the time row no basis costs less. The gap is to its second cheapest slot. The
    others (time-bound at this level) go through `choose`."""
    c = part.slots
    valid = part.valid[:, :c]
    with np.errstate(divide="ignore", invalid="ignore"):
        per_share = np.where(valid, part.priced(y_link)[:, :c] / part.a0, np.inf)
    rows = np.arange(part.blocks)
    best = np.argmin(per_share, axis=1)
    cheapest = per_share[rows, best]
    per_share[rows, best] = np.inf
    second = per_share.min(axis=1)
    need = -part.g[0][:, 0] * float(t[0]) / np.where(valid[rows, best], part.a0[rows, best], 1.0)
    simple = np.isfinite(cheapest) & (need <= 1.0 - 1e-9) & (cheapest >= 0)
    alone = ~np.isfinite(second)  # one slot: nothing to be torn between
    spread = np.where(alone, 1.0, np.maximum(np.abs(cheapest), np.abs(second)))
    ahead = np.where(alone, 1.0, second - np.where(alone, 0.0, cheapest))
    gap = np.where(spread > 0, ahead / np.where(spread > 0, spread, 1.0), 0.0)
    u, v = np.where(simple, best, 0), np.where(simple, c + 1, 1)
    rest = np.flatnonzero(~simple)
    if rest.size:
        others, other_gap = choose(part.take(rest, 1.0), y_link, t)
        u[rest], v[rest], gap[rest] = others.u, others.v, other_gap
    return Bases(u, v), gap


def out_of_bounds(part: Part, bases: Bases, values: tuple[FloatArray, FloatArray]) -> BoolArray:
    """Blocks whose basic values (at the master's level) leave their bounds."""
    xu, xv = values
    rows = np.arange(part.blocks)
    up_u, up_v = part.upper[rows, bases.u], part.upper[rows, bases.v]
    size = 1.0 + np.abs(part.rhs).max(axis=1)
    bad = (xu < -PRIMAL_TOL * size) | (xv < -PRIMAL_TOL * size)
    out: BoolArray = bad | (xu > up_u + PRIMAL_TOL * size) | (xv > up_v + PRIMAL_TOL * size)
    return out


def violated(
    part: Part,
    bases: Bases,
    values: tuple[FloatArray, FloatArray],
    y_link: FloatArray,
    primal: bool = True,
) -> BoolArray:
    """Blocks whose basis is not optimal for their own LP at prices y_link: a basic value
    outside its bounds (unless not `primal`), or a variable at 0 with a negative reduced
    cost."""
    bad = out_of_bounds(part, bases, values) if primal else np.zeros(part.blocks, bool)
    q = part.priced(y_link)
    y = bases.duals(part, q)
    scale = 1.0 + np.abs(q).max(axis=1)
    for var in range(part.slots + 2):
        e0, e1 = part.column(var)
        reduced = q[:, var] - e0 * y[:, 0] - e1 * y[:, 1]
        basic = (bases.u == var) | (bases.v == var)
        bad |= part.valid[:, var] & ~basic & (reduced < -DUAL_TOL * scale)
    out: BoolArray = bad | ~np.isfinite(y).all(axis=1)
    return out


def assemble(form: BlockForm, part: Part, answer: Answer) -> Vertex:
    """The form's x and duals: fixed blocks from their bases, the rest from the master."""
    b, c = part.blocks, part.slots
    bases, free, master = answer.bases, answer.free, answer.master
    local = np.zeros((b, c + 2))
    xu, xv = affine(part, bases).at(master.t)
    rows = np.arange(b)
    local[rows, bases.u] = xu
    local[rows, bases.v] = xv
    local[free] = master.x
    local = np.where(part.valid, np.clip(local, 0.0, part.upper), 0.0)
    y_loc = bases.duals(part, part.priced(master.y_link))
    y_loc[free] = master.y_free
    x = np.concatenate([local[:, :c].ravel(), master.t, local[:, c:].ravel(), master.link_slack])
    return Vertex(x, y_loc, master.y_link, answer.rounds, int(free.sum()))
