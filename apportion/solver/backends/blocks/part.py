"""A block-shaped LP with two rows per block, as the vertex method reads it (`vertex.py`).

The `BlockForm` (`form.py`: minimize cᵀx s.t. A x = b, 0 ≤ x ≤ u) seen block by block: block b
has V = C + 2 variables, its C slots' columns (x_bc: entries a_0bc, a_1bc in its two rows and
lv_bc in linking row `link[c]`) and its two rows' slacks (σ_br in its row r), and its rows read

    Σ_c a_rbc x_bc + σ_br s_br + Σ_p g_rbp t_p = b_br        (r = 0, 1),

where t are the P linking columns (the level). The linking rows read
Σ_b Σ_c lv_bc x_bc [link c = l] + Σ_p h_lp t_p + σ_l s_l = b_l. A basis of a block is two of
its V variables (`Bases`); the rest sit at 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from apportion.solver.arraytypes import BoolArray, FloatArray, IntArray
from apportion.solver.backends.blocks.form import BlockForm


@dataclass(frozen=True, eq=False)
class Part:
    a0: FloatArray  # (B, C) row 0's entries
    a1: FloatArray  # (B, C)
    sig: FloatArray  # (B, 2) each row's slack coefficient (0: no slack)
    rhs: FloatArray  # (B, 2)
    g: FloatArray  # (2, B, P)
    cost: FloatArray  # (B, V): the slots' costs, then 0 for the slacks
    upper: FloatArray  # (B, V)
    valid: BoolArray  # (B, V)
    lv: FloatArray  # (B, C)
    link: IntArray  # (C,) linking row of each slot, −1: none
    h: FloatArray  # (L, P)
    cost_link: FloatArray  # (P,)
    upper_link: FloatArray  # (P,)
    sig_link: FloatArray  # (L,)
    rhs_link: FloatArray  # (L,)
    upper_slack_link: FloatArray  # (L,)

    @property
    def blocks(self) -> int:
        return int(self.a0.shape[0])

    @property
    def slots(self) -> int:
        return int(self.a0.shape[1])

    @property
    def linking_rows(self) -> int:
        return int(self.h.shape[0])

    @property
    def linking_cols(self) -> int:
        return int(self.h.shape[1])

    def column(self, var: int) -> tuple[FloatArray, FloatArray]:
        """Variable `var`'s entries in the two rows of every block."""
        c = self.slots
        if var < c:
            return self.a0[:, var], self.a1[:, var]
        zero = np.zeros(self.blocks)
        return (self.sig[:, 0], zero) if var == c else (zero, self.sig[:, 1])

    def rhs_at(self, t: FloatArray) -> FloatArray:
        """(B, 2): each block's right-hand side with the linking columns at t."""
        out: FloatArray = self.rhs - np.einsum("rbp,p->br", self.g, t)
        return out

    def priced(self, y_link: FloatArray) -> FloatArray:
        """(B, V): each variable's cost less what its linking row charges at prices y_link."""
        out = self.cost.copy()
        charge = np.append(y_link, 0.0)[self.link]  # −1 reads the appended 0
        out[:, : self.slots] -= self.lv * charge
        return out

    def take(self, index: IntArray, fraction: float) -> Part:
        """The blocks `index` with the linking rows' right-hand sides and the linking columns'
        costs times `fraction`: a sample of the LP at its scale, whose level and prices
        approximate the whole's (its objective is about `fraction` times the whole's, so that
        its duals are of the whole's size, whether the costs are on the blocks or on t)."""
        return Part(
            self.a0[index],
            self.a1[index],
            self.sig[index],
            self.rhs[index],
            self.g[:, index],
            self.cost[index],
            self.upper[index],
            self.valid[index],
            self.lv[index],
            self.link,
            self.h,
            self.cost_link * fraction,
            self.upper_link,
            self.sig_link,
            self.rhs_link * fraction,
            self.upper_slack_link * fraction,
        )


def of_form(form: BlockForm) -> Part:
    """The unscaled `form` (two rows per block) block by block."""
    b, c, p = form.blocks, form.slots, form.linking_cols
    nx = b * c + p
    cost_x = form.cost[: b * c].reshape(b, c)
    upper_x = form.upper[: b * c].reshape(b, c)
    valid_x = form.valid[: b * c].reshape(b, c)
    slack_upper = form.upper[nx : nx + 2 * b].reshape(b, 2)
    slack_valid = form.valid[nx : nx + 2 * b].reshape(b, 2)
    return Part(
        a0=form.a[0],
        a1=form.a[1],
        sig=form.sig_loc,
        rhs=form.rhs_loc,
        g=form.g,
        cost=np.hstack([cost_x, np.zeros((b, 2))]),
        upper=np.hstack([upper_x, slack_upper]),
        valid=np.hstack([valid_x, slack_valid]),
        lv=form.lv,
        link=form.slot_link,
        h=form.h,
        cost_link=form.cost[b * c : nx],
        upper_link=form.upper[b * c : nx],
        sig_link=form.sig_link,
        rhs_link=form.rhs_link,
        upper_slack_link=form.upper[nx + 2 * b :],
    )


@dataclass(frozen=True, eq=False)
class Bases:
    """Each block's two basic variables (u < v); u = −1: none chosen (the block is free)."""

    u: IntArray
    v: IntArray

    def solve(self, part: Part, rhs: FloatArray) -> tuple[FloatArray, FloatArray, BoolArray]:
        """(x_u, x_v, regular) with B [x_u, x_v] = rhs per block; regular: B nonsingular."""
        mu0, mu1 = _entries(part, self.u)
        mv0, mv1 = _entries(part, self.v)
        det = mu0 * mv1 - mu1 * mv0
        scale = np.maximum(np.abs(mu0) + np.abs(mu1), 1e-300) * np.maximum(
            np.abs(mv0) + np.abs(mv1), 1e-300
        )
        regular = np.abs(det) > 1e-12 * scale
        safe = np.where(regular, det, 1.0)
        xu = (rhs[:, 0] * mv1 - rhs[:, 1] * mv0) / safe
        xv = (mu0 * rhs[:, 1] - mu1 * rhs[:, 0]) / safe
        return xu, xv, regular

    def duals(self, part: Part, q: FloatArray) -> FloatArray:
        """(B, 2): the row duals y_b with Bᵀ y_b = q_B (the basic variables' reduced costs 0)."""
        mu0, mu1 = _entries(part, self.u)
        mv0, mv1 = _entries(part, self.v)
        det = mu0 * mv1 - mu1 * mv0
        safe = np.where(det != 0, det, 1.0)
        rows = np.arange(part.blocks)
        qu, qv = q[rows, np.maximum(self.u, 0)], q[rows, np.maximum(self.v, 0)]
        return np.column_stack([(qu * mv1 - qv * mu1) / safe, (mu0 * qv - mv0 * qu) / safe])


def _entries(part: Part, var: IntArray) -> tuple[FloatArray, FloatArray]:
    """Per block, variable var[b]'s entries in the block's two rows."""
    c = part.slots
    rows = np.arange(part.blocks)
    slot = np.clip(var, 0, c - 1)
    e0 = np.where(var < c, part.a0[rows, slot], np.where(var == c, part.sig[:, 0], 0.0))
    e1 = np.where(var < c, part.a1[rows, slot], np.where(var == c + 1, part.sig[:, 1], 0.0))
    return e0, e1
