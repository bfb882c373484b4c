"""What a multi-node family's jobs suffer: the t rows of the pooled model.

E_fn, the worst CS a piece of family f on node n meets, is R_αn (running jobs, α = α_f) or
CS(α|β) once a candidate of configuration β shares n (`colocation`). With levels L_1 < L_2 < …
of the values E_fn can take and t_fl the number of f's jobs whose worst piece reaches L_l
(`counters`),
    Σ_{jobs of f} (CS_j − 1) = Σ_l (L_l − L_{l−1}) t_fl            (L_0 = 1)
    t_fl ≥ t_f,l+1,  t_fl ≤ s_f,  t_fl ∈ ℤ₊
    t_fl ≥ u_fn                 for n with R_αn at level l (every piece on n is another job)
    t_fl ≥ Σ_{n: R_αn ≥ L_l} u_fn / k_f                   (k pieces per job, rounded up)
    t_fl ≥ y_fnβ ≥ u_fn − b_fn (1 − h_βn)   for CS(α|β) at level l, h_βn = 1 when a piece of
                                            configuration β (another one, if β = α) is on n
with the slot rows (`slots`) and, when lifted, the rows of `met` on top.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from apportion.formulations.placement.instance import Instance
from apportion.formulations.placement.model import matrix
from apportion.formulations.placement.pooled.colocation import (
    Colocation,
    Triggers,
    candidate_triggers,
    colocation,
)
from apportion.formulations.placement.pooled.counters import Counters, chain_rows, levels
from apportion.formulations.placement.pooled.families import Families
from apportion.formulations.placement.pooled.met import met_cells, met_rounded_rows
from apportion.formulations.placement.pooled.slots import slot_rows
from apportion.formulations.placement.running import running_worst
from apportion.solver.arraytypes import BoolArray, FloatArray, IntArray
from apportion.solver.model import Block, Model


def own_rows(
    model: Model,
    inst: Instance,
    fam: Families,
    s: Block,
    u: Block,
    modeled: BoolArray,
    lifted: bool,
) -> Counters:
    """The t rows: level counters of what each multi-node family's jobs suffer."""
    base = running_worst(inst)
    r_pair = base[fam.config[fam.pair_family], fam.pair_node]
    triggers = candidate_triggers(inst, fam, base, modeled)
    h, h2 = colocation(model, inst, fam, u, triggers)
    ladders = _ladders(fam, r_pair, triggers)
    if not ladders.family:
        return Counters(None, np.zeros(0, np.int64), np.zeros(0), np.zeros(0), h, h2)
    tf = np.array(ladders.family)
    t = model.add_variables(
        "excess_jobs",
        tf.size,
        upper=fam.size[tf].astype(float),
        integer=True,
        coords=(("family", tf.tolist()),),
    )
    _excess_rows(model, fam, s, u, t, tf, ladders)
    if triggers.family.size:
        _trigger_rows(model, fam, u, t, ladders.trigger, triggers, h, h2)
    levels_of = np.array(ladders.level)
    met = met_cells(model, fam, u, triggers, h, h2) if lifted else None
    slot_rows(model, fam, s, u, t, tf, levels_of, r_pair, met)
    if met is not None:
        met_rounded_rows(model, fam, u, t, tf, levels_of, r_pair, met)
    return Counters(t, tf, levels_of, np.array(ladders.delta), h, h2, met)


@dataclass
class _Ladders:
    """Every multi-node family's levels, one t column each, and where the rows attach."""

    trigger: IntArray  # per trigger: its t column
    family: list[int] = field(default_factory=list)  # per t column
    delta: list[float] = field(default_factory=list)
    level: list[float] = field(default_factory=list)
    link: list[tuple[IntArray, IntArray]] = field(default_factory=list)  # (t, pair): t ≥ u
    ceil: list[tuple[IntArray, IntArray, float]] = field(default_factory=list)  # (t, pairs, 1/k)
    chain: list[int] = field(default_factory=list)  # t column i with t_i ≥ t_{i+1}


def _ladders(fam: Families, r_pair: FloatArray, triggers: Triggers) -> _Ladders:
    """The levels above 1 of what each multi-node family's pieces meet, from running jobs
    (R per pair) and candidate co-runners (the triggers' values)."""
    out = _Ladders(np.zeros(triggers.family.size, dtype=np.int64))
    for f in np.flatnonzero(fam.nodes > 1).tolist():
        mine = fam.pairs_of[f]
        cand = np.flatnonzero(triggers.family == f)
        values = np.concatenate([r_pair[mine], triggers.value[cand]])
        found, index = levels(values[values > 1.0])
        if not found.size:
            continue
        start = len(out.family)
        out.family.extend([f] * found.size)
        out.delta.extend(np.diff(found, prepend=1.0).tolist())
        out.level.extend(found.tolist())
        out.chain.extend(range(start, start + found.size - 1))
        above = r_pair[mine] > 1.0
        out.link.append((start + index[: above.sum()], mine[above]))
        out.trigger[cand] = start + index[above.sum() :]
        for lvl, level in enumerate(found.tolist()):
            out.ceil.append(
                (np.array([start + lvl]), mine[r_pair[mine] >= level], 1.0 / fam.nodes[f])
            )
    return out


def _excess_rows(
    model: Model, fam: Families, s: Block, u: Block, t: Block, tf: IntArray, ladders: _Ladders
) -> None:
    """t ≥ u (a piece at the level by R), the chain, t ≥ Σ u / k (rounded), t ≤ s."""
    n_t, n_pair = tf.size, fam.pair_family.size
    rows = np.concatenate([a for a, _ in ladders.link])
    cols = np.concatenate([b for _, b in ladders.link])
    model.add_constraints(
        "excess_piece",
        {
            t: matrix(np.arange(rows.size), rows, 1.0, (rows.size, n_t)),
            u: matrix(np.arange(rows.size), cols, -1.0, (rows.size, n_pair)),
        },
        lower=0.0,
    )
    chain_rows(model, "excess_chain", t, ladders.chain)
    ceil = ladders.ceil
    c_rows = np.concatenate([np.repeat(r, p.size) for r, p, _ in ceil])
    c_cols = np.concatenate([p for _, p, _ in ceil])
    c_vals = np.concatenate([np.full(p.size, k) for _, p, k in ceil])
    model.add_constraints(
        "excess_rounded",
        {
            t: sp.identity(n_t, format="csr"),
            u: matrix(c_rows, c_cols, -c_vals, (n_t, n_pair)),
        },
        lower=0.0,
    )
    model.add_constraints(
        "excess_at_most_started",
        {t: sp.identity(n_t, format="csr"), s: matrix(np.arange(n_t), tf, -1.0, (n_t, s.size))},
        upper=0.0,
    )


def _trigger_rows(
    model: Model,
    fam: Families,
    u: Block,
    t: Block,
    trig_t: IntArray,
    triggers: Triggers,
    h: Colocation,
    h2: Colocation,
) -> None:
    """t ≥ u_fn − b_fn (1 − h): the level of CS(α|β) is reached on n once β is there too."""
    node = fam.pair_node[triggers.pair]
    alpha = fam.config[triggers.family]
    b = fam.pair_upper[triggers.pair].astype(float)
    n = triggers.pair.size
    rows = np.arange(n)
    terms = {
        t: matrix(rows, trig_t, 1.0, (n, t.size)),
        u: matrix(rows, triggers.pair, -1.0, (n, u.size)),
    }
    other = triggers.beta != alpha
    for cells, sel, cfg in ((h, other, triggers.beta), (h2, ~other, alpha)):
        if cells.block is not None:
            terms[cells.block] = matrix(
                rows[sel], cells.index[cfg[sel], node[sel]], -b[sel], (n, cells.block.size)
            )
    model.add_constraints("excess_candidate", terms, lower=-b)
