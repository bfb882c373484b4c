"""The Pareto stage of the share policies (FORMULATIONS §1d): after the levels are fixed, give
what is left to whoever can use it, so that no job's share can rise without another's falling.

The max-min LP of §1 has many optima and fixes only the minimum: a simplex vertex, or an
interior point, may leave GPUs idle or jobs on types where others would gain more. The Pareto
LP is the same model with every group held at or above the value the levels gave it and the
objective replaced by the total normalized throughput

    maximize    Σ_g n_g v_g
    subject to  v_g ≥ w_g t*  (max-min) or v_g ≥ L_g (the frozen levels),  base constraints.

Its optimum is Pareto-efficient among all allocations: any allocation that raised one job
without lowering another would keep every floor and have a larger total. For max-min the
minimum stays t* exactly. For water filling and hierarchical fairness every job freezes as a
bottleneck of its level, so their final allocation is already Pareto-efficient in exact
arithmetic; the same LP over their frozen levels only removes what solver tolerances leave.

Max-min in one LP when every job can reach its own ceiling. A member of group g can reach at
most c_g = max Σ_k a_gk X_gk (a_gk = s_g T_gk / prop_g) over its time and its group's share of
each type, X_gk ≤ min(1, N_k / (n_g s_g)): a fractional knapsack over its types by a_gk. So
t* ≤ t̄ = min_g c_g / w_g, and when the Pareto LP with floors w_g t̄ is feasible, t* = t̄ and its
optimum is the answer: one LP instead of two. That is the case of an under-subscribed cluster,
where idle GPUs are the defect this stage removes. A cheap necessary condition (Hall's, over
the sets of types) rules the attempt out when the floors cannot fit, which is the usual case of
an over-subscribed one.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from apportion.formulations.fairness.share_lp import LevelState, ShareStructure
from apportion.solver.arraytypes import FloatArray
from apportion.solver.sparse import transpose_dot

#: Floors sit this far (relative) below the level they keep: an interior point satisfies its
#: rows only to its tolerance, so a floor exactly at its own optimum can read as infeasible.
INTERIOR_FLOOR_SLACK = 1e-7
#: And a vertex's floors this far. At the level itself the Pareto LP's feasible set is a
#: sliver (the max-min optimum's face); on it the simplex ends with rows met only to its
#: tolerance, the answer's repair then lowers a share by as much, and the total can sit 1e-4
#: below the optimum at the level it reports when throughputs span 1e6 (a job held at its
#: level by 1e-6 of its share on a type 1e6 times slower). A floor 1e-9 below leaves the
#: simplex an exact vertex that meets every floor, optimal at the level it reports.
VERTEX_FLOOR_SLACK = 1e-9
#: The ceiling level is computed here, not by a solver: floors 1e-9 below it leave an interior
#: point room to work and cost the jobs held there no more than that.
CEILING_SLACK = 1e-9
#: The largest objective coefficient of the Pareto LP: an interior point converges in fewer
#: iterations with the costs of the same order as the level's rows than with them at 1 (the
#: `max_min` bench's Pareto rows).
COST_SCALE = 100.0
#: Hall's condition is checked over every set of types up to this many types (2^K sets);
#: beyond, over the whole cluster only.
HALL_MAX_TYPES = 12


def total_share_costs(value: sp.csr_matrix, count: FloatArray) -> FloatArray:
    """Objective coefficients of Σ_g n_g v_g over the value columns (X, then Y), scaled so the
    largest is `COST_SCALE` (the optimum does not change; the solver's cost tolerances then
    read them relative to each other, whatever the magnitude of the shares)."""
    costs: FloatArray = transpose_dot(value, count)
    top = float(np.abs(costs).max(initial=0.0))
    return costs * (COST_SCALE / top) if top > 0 else costs


def ceiling(s: ShareStructure) -> FloatArray:
    """c_g: the largest normalized throughput a member of group g can reach alone (pairs
    aside), filling its types by value per unit of time, each up to its group's share."""
    rate = np.where(s.eligible, s.gain[:, None] * s.throughput, 0.0)
    room = np.minimum(1.0, s.capacity[None, :] / (s.groups.count * s.scale)[:, None])
    room = np.where(s.eligible, room, 0.0)
    order = np.argsort(-rate, axis=1)
    rate = np.take_along_axis(rate, order, axis=1)
    room = np.take_along_axis(room, order, axis=1)
    before = np.cumsum(room, axis=1) - room
    time = np.clip(np.minimum(room, 1.0 - before), 0.0, None)
    reach: FloatArray = (rate * time).sum(axis=1)
    return reach


def ceiling_level(s: ShareStructure) -> float:
    """t̄ = min_g c_g / w_g, an upper bound on the max-min level (one entity, ω = w)."""
    return float((ceiling(s) / s.weight).min())


def may_reach(s: ShareStructure, level: float) -> bool:
    """Hall's condition for floors w_g · level: for every set S of types, the jobs that can run
    only on S need, at least, GPU-time n_g s_g w_g level / max_k a_gk (their fastest type all
    along), which must fit in Σ_{k∈S} N_k. Necessary, not sufficient: False means the floors
    cannot all be met, True that they may be."""
    rate = np.where(s.eligible, s.gain[:, None] * s.throughput, 0.0)
    best = rate.max(axis=1)
    need = s.groups.count * s.scale * s.weight * level / np.where(best > 0, best, np.inf)
    k = s.capacity.size
    if k > HALL_MAX_TYPES:
        return bool(need.sum() <= s.capacity.sum() * (1 + 1e-9))
    bits = np.left_shift(1, np.arange(k))
    mask = (s.eligible * bits).sum(axis=1)
    needed = np.bincount(mask, weights=need, minlength=1 << k)
    available = np.zeros(1 << k)
    available[bits] = s.capacity
    for b in bits.tolist():
        # Sum over subsets (zeta transform): each set gets the totals of the sets inside it.
        has = (np.arange(1 << k) & b) != 0
        needed[has] += needed[~has]
        available[has] += available[~has]
    return bool((needed <= available * (1 + 1e-9) + 1e-12).all())


def floored(state: LevelState, level: float) -> LevelState:
    """The max-min state with t held at or above `level` (original units): the same model as
    the max-min LP, so the Pareto LP can start from its basis."""
    return LevelState(state.omega, state.lower, state.sigma, state.enforced, state.exceed, level)


def as_floors(s: ShareStructure, state: LevelState) -> LevelState:
    """The floors of `state` with its level substituted, v_g ≥ lo_g + ω_g (W_e / σ_e) t_floor,
    as a state with no level row (the Pareto LP built on its own)."""
    sigma = np.where(state.sigma > 0, state.sigma, 1.0)
    per_t = state.omega * (s.entity_weight / sigma)[s.entity]
    return frozen(state.lower + per_t * state.t_floor, s.num_entities)


def frozen(floor: FloatArray, num_entities: int) -> LevelState:
    """Every group frozen at `floor`: no level row, no weight, only v_g ≥ floor_g."""
    n = floor.size
    return LevelState(
        np.zeros(n), floor, np.zeros(num_entities), np.zeros(num_entities, bool), np.zeros(n)
    )
