"""The share LP behind max-min fairness, water filling and hierarchical fairness.

Over job groups g (n_g identical jobs; FORMULATIONS §1, §1a–1c), single columns X_gk (time of
each member alone on k) and, with space sharing, pair-class columns Y_ck (time of each of the
n_c pairs of class c = {g, h} on k). The normalized throughput of a member of g is

    v_g = (s_g / prop_g) · (Σ_k T_gk X_gk + Σ_{c∋g} (n_c / n_g) Σ_k T^(g)_ck Y_ck)

and the level LP is

    maximize    t
    subject to  v_g − ω_g z_e(g) ≥ lo_g        ∀g   (share: active ω_g > 0, lo = 0; frozen
                                                     ω_g = 0, lo = the value it froze at)
                σ_e z_e − W_e t = 0            ∀e   (level: z_e = W_e t / σ_e; free when the
                                                     entity has no active group)
                Σ_k X_gk + Σ_{c∋g} (n_c/n_g) Σ_k Y_ck ≤ 1          ∀g   (time)
                Σ_g n_g s_g X_gk + Σ_c n_c s_c Y_ck ≤ N_k          ∀k   (capacity)
                X, Y, z, t ≥ 0

The same model, with exceed variables e_g switched on, is the exact bottleneck test of
`formulations/fairness/levels.py` (see `LevelState`).

Scaling. Shares span many orders of magnitude (weights to 1e3, throughputs to 1e-3, large
normalizers: a level of 1e-10 is an ordinary answer), far below a solver's feasibility
tolerance. So each share row is divided by c_g, its largest coefficient, and the level is
solved as τ = t / r with r = min_g c_g σ_e / (ω_g W_e), the largest level the most limited group
could reach, rounded to a power of ten, and each z_e as z_e / r_e with r_e = r W_e / σ_e, so that
the level rows read z_e − t = 0: every row then has coefficients of at most about 1 and τ of
order 1 at the first level, whatever the magnitude of weights. Results are read back through
`ShareBlocks` in the original units.

A group's effective weight is W_e ω_g / σ_e: plain max-min has one entity with W = σ = 1 and
ω_g = w_g; entities with `fairness` use σ_e = Σ_{active g∈e} n_g w_g; `fifo` gives ω = 1 to the
entity's oldest active job. Weights change through a few coefficients, so re-solves stay warm.
(For a group within one class, g = h, both terms land on the same rows: n_c/n_g counts each
member's pairs once per side, 2 n_c / n_g = n_g − 1 in total.)
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import scipy.sparse as sp

from apportion.formulations.allocation import Allocation, JobGroups, add_allocation
from apportion.formulations.fairness.space_sharing import PairClasses
from apportion.solver.arraytypes import BoolArray, FloatArray, IntArray
from apportion.solver.backends import Solution
from apportion.solver.model import (
    INF,
    MAX_LINKING_COLUMNS,
    Block,
    BlockShape,
    Model,
    Sense,
    Take,
)


@dataclass(frozen=True, eq=False)
class ShareStructure:
    """Everything the share LP needs, in group space."""

    groups: JobGroups
    labels: list[str]  # one per group (its representative's id)
    gpu_names: list[str]
    throughput: FloatArray  # T_gk of the representatives (policy throughputs)
    eligible: BoolArray  # (groups, types)
    scale: FloatArray  # s_g
    weight: FloatArray  # w_g
    gain: FloatArray  # s_g / prop_g
    capacity: FloatArray  # N_k
    entity: IntArray  # entity (level variable) of each group
    entity_weight: FloatArray  # W_e
    entity_names: list[str]
    pairs: PairClasses | None = None
    pair_columns: tuple[IntArray, IntArray] | None = None  # (class, type) of each Y column

    @property
    def size(self) -> int:
        return self.groups.size

    @property
    def num_entities(self) -> int:
        return int(self.entity_weight.size)


@dataclass(frozen=True, eq=False)
class ShareBlocks:
    """Where the parts of a built share LP live."""

    x: Allocation
    y: Block | None
    e: Block | None  # exceed variables of the bottleneck test, one per group (None: no test)
    z: Block | None  # level variables (None: substituted, see `build_share_lp`)
    t: Block
    share: Block
    level: Block | None
    value: sp.csr_matrix  # (groups × (X, Y) columns): v_g as a function of the first columns
    row_scale: FloatArray  # c_g: share row g is divided by it
    level_scale: float  # r: the model's t is t / r
    entity_scale: FloatArray  # r_e = r W_e / σ_e: the model's z_e is z_e / r_e
    # (time, capacity): the time and capacity rows over the value columns, unscaled.
    resources: tuple[sp.csr_matrix, sp.csr_matrix]
    time: Block | None = None
    capacity: Block | None = None

    def level_parts(self) -> tuple[Block, Block, Block]:
        """(e, z, level) of a model built for level-by-level solving (not `single`)."""
        assert self.e is not None and self.z is not None and self.level is not None
        return self.e, self.z, self.level

    def level_value(self, solution: Solution) -> float:
        """t in the original units."""
        return float(solution.value(self.t)[0]) * self.level_scale

    def entity_levels(self, solution: Solution) -> FloatArray:
        """z_e in the original units."""
        z: FloatArray = solution.value(self.level_parts()[1]) * self.entity_scale
        return z

    def share_duals(self, solution: Solution) -> FloatArray:
        """Duals of the share rows as written in the module docstring (unscaled)."""
        y: FloatArray = solution.dual(self.share) / self.row_scale
        return y


@dataclass(frozen=True)
class LevelState:
    """The coefficients that change between level LPs (see the module docstring).

    With `exceed` all zero the LP maximizes t. Otherwise it is the bottleneck test: t ≥ t_floor
    and maximize Σ_g e_g with 0 ≤ e_g ≤ exceed_g, each share row reading v_g − ω_g z_e − e_g ≥ lo_g.
    """

    omega: FloatArray  # ω_g
    lower: FloatArray  # lo_g
    sigma: FloatArray  # σ_e
    enforced: BoolArray  # level row e in force
    exceed: FloatArray  # upper bound of e_g (0 = not tested)
    t_floor: float = 0.0

    @property
    def testing(self) -> bool:
        return bool(self.exceed.any())

    def with_test(self, exceed: FloatArray, t_floor: float) -> LevelState:
        return replace(self, exceed=exceed, t_floor=t_floor)


def pair_terms(s: ShareStructure) -> tuple[sp.csr_matrix, sp.csr_matrix, sp.csr_matrix]:
    """(value, time, capacity) matrices of the Y columns; empty without space sharing."""
    if s.pairs is None or s.pair_columns is None:
        empty = sp.csr_matrix((s.size, 0))
        return empty, empty, sp.csr_matrix((s.capacity.size, 0))
    c, k = s.pair_columns
    p, n = s.pairs, s.groups.count
    cols = np.arange(c.size)
    per_g, per_h = p.count[c] / n[p.g[c]], p.count[c] / n[p.h[c]]
    rows = np.concatenate([p.g[c], p.h[c]])
    both = np.concatenate([cols, cols])
    value = np.concatenate(
        [s.gain[p.g[c]] * per_g * p.ta[c, k], s.gain[p.h[c]] * per_h * p.tb[c, k]]
    )
    shape = (s.size, c.size)
    value_m = sp.csr_matrix((value, (rows, both)), shape=shape)
    time_m = sp.csr_matrix((np.concatenate([per_g, per_h]), (rows, both)), shape=shape)
    capacity_m = sp.csr_matrix(
        (p.count[c] * p.scale[c], (k, cols)), shape=(s.capacity.size, c.size)
    )
    return value_m, time_m, capacity_m


def build_share_lp(
    s: ShareStructure, state: LevelState, single: bool = False, name: str = "share"
) -> tuple[Model, ShareBlocks]:
    """The level LP for `state`; max-min fairness is the special case of one level.

    `single` builds it for one solve with every level row in force and no bottleneck test
    (max-min fairness): z_e = W_e t / σ_e is substituted into the share rows, so the exceed
    columns, the level variables and their rows are left out (an interior point would pay cone
    rows for each of them)."""
    model = Model(name)
    x, y = _columns(model, s)
    parts = _parts(s, x, y)
    value, time_m, capacity_m = (
        ms[0] if len(ms) == 1 else sp.hstack(ms, format="csr")
        for ms in zip(*parts.values(), strict=True)
    )
    c, r = _scales(s, state, value)
    r_e = entity_scales(s, state, r)
    e = None
    if not single:
        e = model.add_variables(
            "e", s.size, lower=0.0, upper=state.exceed / c, coords=(("job", s.labels),)
        )
    z = None
    if not single:
        z = model.add_variables(
            "z", s.num_entities, lower=0.0, coords=(("entity", s.entity_names),)
        )
    t = model.add_variables("t", 1, lower=state.t_floor / r)
    per_row = 1.0 / c
    share_terms: dict[Block, Any] = {x.block: _rows_scaled(parts[x.block][0], per_row)}
    level_terms = share_level_coefficients(s, state, c, r_e)
    if z is None:  # z_e = W_e t / σ_e = r_e t / r: in the model's units, z_e is t itself
        share_terms[t] = level_terms[:, None]
    else:
        rows = np.arange(s.size)
        share_terms[z] = sp.csr_matrix((level_terms, (rows, s.entity)), shape=(s.size, z.size))
    if e is not None:
        share_terms[e] = -sp.identity(s.size, format="csr")
    if y is not None:
        share_terms[y] = _rows_scaled(parts[y][0], per_row)
    time_terms = {block: part[1] for block, part in parts.items()}
    capacity_terms = {block: part[2] for block, part in parts.items()}
    group_coords = (("job", s.labels),)
    share = model.add_constraints("share", share_terms, lower=state.lower / c, coords=group_coords)
    time = model.add_constraints("time", time_terms, upper=1.0, coords=group_coords)
    capacity = model.add_constraints(
        "capacity", capacity_terms, upper=s.capacity, coords=(("gpu", s.gpu_names),)
    )
    level = None if z is None else _level_rows(model, s, state, z, t)
    model.set_objective({e: 1.0} if e is not None and state.testing else {t: 1.0}, Sense.MAXIMIZE)
    if y is None:
        model.shape = block_shape(s, x, e, share, time, z)
    resources = (time_m, capacity_m)
    blocks = ShareBlocks(x, y, e, z, t, share, level, value, c, r, r_e, resources, time, capacity)
    return model, blocks


def _parts(
    s: ShareStructure, x: Allocation, y: Block | None
) -> dict[Block, tuple[sp.csr_matrix, sp.csr_matrix, sp.csr_matrix]]:
    """(value, time, capacity) rows over the X columns and, if there are any, the Y columns."""
    parts = {
        x.block: (
            x.per_group(s.gain[x.group] * s.throughput[x.group, x.gpu]),
            x.per_group(np.ones(x.block.size)),
            x.per_type((s.groups.count * s.scale)[x.group]),
        )
    }
    if y is not None:
        parts[y] = pair_terms(s)
    return parts


def _rows_scaled(m: sp.csr_matrix, factor: FloatArray) -> sp.csr_matrix:
    """diag(factor) @ m, entry by entry (the same products, and the zeros they make dropped as
    the matrix product drops them), without a general sparse product's cost."""
    data = m.data * np.repeat(factor, np.diff(m.indptr))
    scaled = sp.csr_matrix((data, m.indices, m.indptr), shape=m.shape)
    if not data.all():
        scaled.eliminate_zeros()
    return scaled


def block_shape(
    s: ShareStructure, x: Allocation, e: Block | None, share: Block, time: Block, z: Block | None
) -> BlockShape | None:
    """Each group's block: its share and time rows, its X_g· in the slot of their type (so
    that slot k meets capacity row k) and its exceed column; t and the z_e link them. None with
    more level columns than a block shape holds."""
    if z is not None and z.size + 1 > MAX_LINKING_COLUMNS:
        return None
    groups = np.arange(s.size)
    rows = np.column_stack([share.start + groups, time.start + groups])
    cols = np.full((s.size, s.capacity.size + (e is not None)), -1, dtype=np.int64)
    cols[x.group, x.gpu] = x.block.start + np.arange(x.block.size)
    if e is not None:
        cols[:, -1] = e.start + groups
    return BlockShape(rows, cols)


#: Share-row coefficients within this range need no scaling of ours.
ORDINARY = (1e-3, 1e3)


def _scales(s: ShareStructure, state: LevelState, value: sp.csr_matrix) -> tuple[FloatArray, float]:
    """(c, r) of the module docstring's scaling, for the state the model is built in."""
    c = np.zeros(value.shape[0])
    filled = np.diff(value.indptr) > 0
    if value.nnz:  # the largest |entry| of each row with entries, in one pass over them
        c[filled] = np.maximum.reduceat(np.abs(value.data), value.indptr[:-1][filled])
    c = np.where(c > 0, c, 1.0)
    if ORDINARY[0] <= c.min() and c.max() <= ORDINARY[1]:
        # Rows of ordinary magnitude are left as written: the solver's own scaling does better
        # on them than ours (the `water_filling` bench rows).
        c = np.ones_like(c)
    return c, level_scale(s, c, state)


def entity_scales(s: ShareStructure, state: LevelState, r: float) -> FloatArray:
    """r_e = r W_e / σ_e: each entity's level variable in units of what it reaches as t moves
    by r (r itself for an entity without active groups)."""
    ratio = np.divide(
        s.entity_weight,
        state.sigma,
        out=np.ones_like(s.entity_weight),
        where=state.sigma > 0,
    )
    scales: FloatArray = r * ratio
    return scales


def share_level_coefficients(
    s: ShareStructure, state: LevelState, c: FloatArray, r_e: FloatArray
) -> FloatArray:
    """The model's coefficient of z_e(g) in share row g: −ω_g r_e / c_g (at most 1 in size for
    the tightest row, by the choice of r)."""
    coefficients: FloatArray = -state.omega * r_e[s.entity] / c
    return coefficients


def level_scale(
    s: ShareStructure, c: FloatArray, state: LevelState, keep: float | None = None
) -> float:
    """r ≈ min over active groups of c_g σ_e / (ω_g W_e), rounded to a power of ten: the
    tightest active share row then has a t coefficient within [0.3, 3], so no solver drops it
    as negligible (the LP stays bounded), and ordinary inputs keep r = 1 (t itself). A current
    scale `keep` stays while within a factor of 1,000 of that: changing it rewrites every active
    row's coefficient, which costs a warm re-solve its speed."""
    sigma = np.where(state.sigma > 0, state.sigma, 1.0)
    per_t = state.omega * (s.entity_weight / sigma)[s.entity]
    limits = c[per_t > 0] / per_t[per_t > 0]
    if not limits.size:
        return 1.0 if keep is None else keep
    needed = float(10.0 ** np.round(np.log10(limits.min())))
    if keep is not None and 1e-3 <= needed / keep <= 1e3:
        return keep
    return needed


def _columns(model: Model, s: ShareStructure) -> tuple[Allocation, Block | None]:
    """X over eligible (group, type) pairs; Y over the pair columns, if any."""
    x = add_allocation(model, s.eligible, s.labels, s.gpu_names)
    if s.pairs is None or s.pair_columns is None or not s.pair_columns[0].size:
        return x, None
    c, k = s.pair_columns
    names = [f"{s.labels[g]}+{s.labels[h]}" for g, h in zip(s.pairs.g, s.pairs.h, strict=True)]
    y = model.add_variables(
        "y",
        c.size,
        lower=0.0,
        coords=(("pair", Take(names, c)), ("gpu", Take(s.gpu_names, k))),
    )
    return x, y


def _level_rows(model: Model, s: ShareStructure, state: LevelState, z: Block, t: Block) -> Block:
    """z_e = W_e t / σ_e for entities in force, free otherwise; in the model's units (z_e / r_e,
    t / r) simply z_e − t = 0, whatever the weights' magnitude."""
    bound = np.where(state.enforced, 0.0, INF)
    return model.add_constraints(
        "level",
        {z: sp.identity(s.num_entities, format="csr"), t: -np.ones((s.num_entities, 1))},
        lower=-bound,
        upper=bound,
        coords=(("entity", s.entity_names),),
    )
