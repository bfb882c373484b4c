"""The restricted master LP of the vertex method (`vertex.py`): every block whose basis is
fixed enters only through its basic variables, affine in the level t,

    x_B(t) = B⁻¹ (b_b − G_b t) = α_b + β_b t,

so its use of the linking rows and its cost are sums over the fixed blocks (one constant and
one column of t's coefficients per linking row); the free blocks keep all their variables and
rows. The master is small (the linking rows and columns, and two rows per free block) and is
solved by HiGHS's simplex to a vertex with its duals.

Its costs are multiplied by the largest linking right-hand side (`cost_scale`): the level LP's
prices are the level over a type's GPUs (1e-6 at a million jobs), and HiGHS's absolute dual
tolerance (1e-10) would otherwise leave them right to 1e-4 only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from apportion.solver.arraytypes import BoolArray, FloatArray, IntArray
from apportion.solver.backends.base import LpMethod, Solution, SolveSettings
from apportion.solver.backends.blocks.part import Bases, Part
from apportion.solver.backends.highs import HighsBackend
from apportion.solver.model import CompiledModel, Sense
from apportion.solver.status import Status


@dataclass(frozen=True, eq=False)
class Affine:
    """The fixed blocks' basic values α + β t: (B,) each, β as (B, P)."""

    alpha_u: FloatArray
    alpha_v: FloatArray
    beta_u: FloatArray
    beta_v: FloatArray

    def at(self, t: FloatArray) -> tuple[FloatArray, FloatArray]:
        return self.alpha_u + self.beta_u @ t, self.alpha_v + self.beta_v @ t


@dataclass(frozen=True, eq=False)
class FixedSums:
    """The fixed blocks' basic variables summed: their use of the linking rows, constant
    (L,) and per unit of t (L, P), and their cost per unit of t (P,) and constant."""

    const: FloatArray
    per_t: FloatArray
    cost_t: FloatArray
    offset: float


@dataclass(frozen=True, eq=False)
class MasterAnswer:
    t: FloatArray  # (P,)
    link_slack: FloatArray  # (L,)
    x: FloatArray  # (F, V) the free blocks' variables
    y_link: FloatArray  # (L,)
    y_free: FloatArray  # (F, 2)
    sums: FixedSums


def affine(part: Part, bases: Bases) -> Affine:
    alpha_u, alpha_v, _ = bases.solve(part, part.rhs)
    beta = [bases.solve(part, -part.g[:, :, p].T) for p in range(part.linking_cols)]
    shape = (part.blocks, part.linking_cols)
    beta_u = np.column_stack([b[0] for b in beta]) if beta else np.zeros(shape)
    beta_v = np.column_stack([b[1] for b in beta]) if beta else np.zeros(shape)
    return Affine(alpha_u, alpha_v, beta_u, beta_v)


def solve_master(
    part: Part, bases: Bases, pieces: Affine, free: BoolArray, settings: SolveSettings
) -> MasterAnswer | None:
    """The master for the blocks `free` (the others fixed at `bases`); None unless HiGHS ends
    it optimal with duals."""
    sums = _fixed_sums(part, bases, pieces, ~free)
    scale = cost_scale(part)
    model = _model(part, sums, free, scale)
    solution: Solution = HighsBackend().solve(model, settings)
    if solution.status is not Status.OPTIMAL or solution.row_dual is None:
        return None
    duals = solution.row_dual / scale
    p, nl = part.linking_cols, part.linking_rows
    f = int(free.sum())
    v = part.slots + 2
    x = solution.x
    return MasterAnswer(
        t=x[:p],
        link_slack=x[p : p + nl],
        x=x[p + nl :].reshape(f, v),
        y_link=duals[:nl],
        y_free=duals[nl:].reshape(f, 2),
        sums=sums,
    )


def cost_scale(part: Part) -> float:
    """The factor on the master's costs that makes its duals of order one."""
    return max(1.0, float(np.abs(part.rhs_link).max(initial=0.0)))


def _model(part: Part, sums: FixedSums, free: BoolArray, scale: float) -> CompiledModel:
    """Columns: t (P), the linking slacks (L), the free blocks' variables (F × V), block by
    block; rows: the linking rows, then the free blocks' two rows each, all equalities; costs
    times `scale`."""
    p, nl = part.linking_cols, part.linking_rows
    const, per_t, cost_t, offset = sums.const, sums.per_t, sums.cost_t, sums.offset
    index = np.flatnonzero(free)
    matrix = _matrix(part, index, per_t)
    valid_link = part.sig_link != 0
    upper = np.concatenate(
        [
            part.upper_link,
            np.where(valid_link, part.upper_slack_link, 0.0),
            np.where(part.valid[index], part.upper[index], 0.0).ravel(),
        ]
    )
    cost = scale * np.concatenate([part.cost_link + cost_t, np.zeros(nl), part.cost[index].ravel()])
    rhs = np.concatenate([part.rhs_link - const, part.rhs[index].ravel()])
    n = p + nl + index.size * (part.slots + 2)
    return CompiledModel(
        name="master",
        sense=Sense.MINIMIZE,
        matrix=matrix,
        cost=cost,
        offset=scale * offset,
        col_lower=np.zeros(n),
        col_upper=upper,
        row_lower=rhs,
        row_upper=rhs.copy(),
        integer=np.zeros(n, bool),
        variables=(),
        constraints=(),
    )


def _matrix(part: Part, index: IntArray, per_t: FloatArray) -> sp.csc_matrix:
    p, nl, c = part.linking_cols, part.linking_rows, part.slots
    v, f = c + 2, index.size
    rows: list[IntArray] = []
    cols: list[IntArray] = []
    vals: list[FloatArray] = []

    def add(r: IntArray, k: IntArray, d: FloatArray) -> None:
        keep = d != 0
        rows.append(r[keep])
        cols.append(k[keep])
        vals.append(d[keep])

    lr, pc = np.nonzero(part.h + per_t)
    add(lr, pc, (part.h + per_t)[lr, pc])
    for r in range(2):  # t in the free blocks' rows
        br, pp = np.nonzero(part.g[r][index])
        add(nl + 2 * br + r, pp, part.g[r][index][br, pp])
    add(np.arange(nl), p + np.arange(nl), part.sig_link)
    first = p + nl + np.arange(f) * v
    base_row = nl + 2 * np.arange(f)
    for slot in range(c):
        add(base_row, first + slot, part.a0[index, slot])
        add(base_row + 1, first + slot, part.a1[index, slot])
        if part.link[slot] >= 0:
            add(np.full(f, part.link[slot]), first + slot, part.lv[index, slot])
    add(base_row, first + c, part.sig[index, 0])
    add(base_row + 1, first + c + 1, part.sig[index, 1])
    shape = (nl + 2 * f, p + nl + f * v)
    data = (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols)))
    return sp.csc_matrix(data, shape=shape)


def _fixed_sums(part: Part, bases: Bases, pieces: Affine, fixed: BoolArray) -> FixedSums:
    """The fixed blocks' basic variables in the linking rows and the objective."""
    nl, p, c = part.linking_rows, part.linking_cols, part.slots
    const, per_t = np.zeros(nl), np.zeros((nl, p))
    cost_t, offset = np.zeros(p), 0.0
    rows = np.flatnonzero(fixed)
    for var, alpha, beta in (
        (bases.u, pieces.alpha_u, pieces.beta_u),
        (bases.v, pieces.alpha_v, pieces.beta_v),
    ):
        var_f, alpha_f, beta_f = var[rows], alpha[rows], beta[rows]
        unit_cost = part.cost[rows, var_f]
        offset += float(unit_cost @ alpha_f)
        cost_t += unit_cost @ beta_f
        slot = var_f < c
        linked = np.zeros_like(slot)
        link = np.full(rows.size, -1)
        link[slot] = part.link[var_f[slot]]
        linked = link >= 0
        weight = np.zeros(rows.size)
        at = np.flatnonzero(linked)
        weight[at] = part.lv[rows[at], var_f[at]]
        const += np.bincount(link[linked], weights=(weight * alpha_f)[linked], minlength=nl)
        for q in range(p):
            per_t[:, q] += np.bincount(
                link[linked], weights=(weight * beta_f[:, q])[linked], minlength=nl
            )
    return FixedSums(const, per_t, cost_t, offset)


#: The master's answer joins the fixed blocks' exact one: HiGHS's default tolerances (1e-7)
#: would leave reduced costs that the certificate's 1e-9 gap does not allow.
TOLERANCES = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}


def simplex_settings(threads: int | None, time_limit: float | None) -> SolveSettings:
    return SolveSettings(
        time_limit=time_limit,
        threads=threads,
        lp_method=LpMethod.SIMPLEX,
        tuning={HighsBackend.name: TOLERANCES},
    )
