"""Water-filling max-min fairness: the leximin-optimal allocation (FORMULATIONS §1a, §1b).

With v_g the normalized throughput of a member of group g (as in `share_lp.py`) and ω_g its
weight in the current level, iteration i solves the level LP

    maximize t  s.t.  v_g ≥ L_g + ω_g z_e(g) for active groups (z_e = W_e t / σ_e),
                      v_g ≥ L_g for frozen ones,  base constraints

where L_g is what g already reached: 0 at the first level, then the value of its row at the last
level's optimum (L_g + ω_g z_e*). So t is the common *increment* over what every job has, the
cumulative level T = Σ t only grows, and no job loses ground it was given when the weights are
recomputed for the next level (hierarchical policies, where a job that freezes passes its share
of the entity weight to its siblings). With fixed weights this is plain water filling: T is the
level u_g = v_g / w_g at which g freezes. The groups that cannot rise above their row's value
without lowering another active group (bottlenecks) freeze there; the loop ends when every group
is frozen, and the frozen levels form the leximin-optimal vector.

Bottlenecks without integers. If the share row of g has a non-zero dual in an optimal dual
solution, then by complementary slackness the row is tight in *every* optimal primal solution,
i.e. g cannot exceed its target while all active groups keep theirs: g is a bottleneck, exactly.
The converse fails under degeneracy (a bottleneck may carry a zero dual), so only groups with a
non-zero dual are frozen; an undetected bottleneck stays active and the next LP (a hot-started
re-solve) returns t = 0 with a non-zero dual on it. Progress is guaranteed: the dual of the t
column reads Σ_e W_e μ_e = 1, which forces a non-zero dual on some active share row, so every
iteration freezes at least one group and there are at most (groups) iterations.

When the weights change between levels (hierarchical policies), leaving a bottleneck for the
next LP is not exact any more: its competitors' weights change first. There the tight groups
with a zero dual are settled by an exact LP test on the same model (`confirm`): hold t at t*
and maximize Σ e_g over them with v_g ≥ L_g + ω_g z_e + e_g, 0 ≤ e_g ≤ room; whoever rises is
not a bottleneck, and once the optimum is 0 the rest are. No integers anywhere.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from apportion.formulations.fairness.level_solvers import LevelSolver
from apportion.formulations.fairness.pareto import ceiling
from apportion.formulations.fairness.share_lp import LevelState, ShareStructure
from apportion.formulations.fairness.share_result import exact_values, resource_matrices
from apportion.solver.arraytypes import BoolArray, FloatArray
from apportion.solver.backends import Solution
from apportion.solver.status import Status

# (share-row dual relative to the largest, share slack relative to the level) to call a group
# a bottleneck: simplex duals are exact to round-off; interior points only approach the face.
VERTEX_TOLERANCES = (1e-9, 1e-7)
INTERIOR_TOLERANCES = (1e-5, 1e-6)
# Interior points satisfy their rows only to the solver's tolerance: rows frozen from them are
# relaxed by this much so that later LPs cannot turn infeasible. Vertices need no slack.
INTERIOR_FREEZE_SLACK = 1e-9
REPAIR_TOLERANCE = 1e-6
#: Relative relaxations of the floors tried, in turn, when a level LP is declared infeasible.
RECOVERY_SLACKS = (1e-9, 1e-8, 1e-7)

# Room e_g ≤ TEST_ROOM · target_g in the bottleneck test. Small room makes one round enough in
# general: if every non-bottleneck can rise by δ alone, averaging those points raises them all by
# δ / (their number) at once, and with e_g capped below that the test's optimum must raise every
# one of them; a larger room lets the LP favour a few and needs more rounds.
TEST_ROOM = 1e-3

#: active groups → (ω_g, σ_e): the weights of the next level LP (see share_lp).
WeightRule = Callable[[BoolArray], tuple[FloatArray, FloatArray]]


@dataclass
class Levels:
    """Per group: the level it froze at, the iteration (1-based) and its effective weight."""

    level: FloatArray
    iteration: NDArray[np.int64]
    weight: FloatArray
    iterations: int = 0  # level LPs
    tests: int = 0  # bottleneck-test LPs
    failure: Solution | None = None  # the level LP that failed, if one did
    floor: FloatArray | None = None  # per group, the v the last good level guarantees


def water_fill(
    structure: ShareStructure,
    rule: WeightRule,
    make_solver: Callable[[LevelState], LevelSolver],
    exact: bool,
) -> tuple[Solution | None, LevelSolver, Levels]:
    """Run the level LPs until every group is frozen; returns the last good level solution.

    `exact` settles every level's bottlenecks before the next LP (needed when weights change
    between levels); otherwise undetected ones are caught by the next LP at the same level.
    """
    n = structure.size
    active = np.ones(n, bool)
    omega, sigma = rule(active)
    state = LevelState(omega, np.zeros(n), sigma, sigma > 0, np.zeros(n))
    solver = make_solver(state)
    levels = Levels(np.full(n, np.nan), np.zeros(n, np.int64), np.full(n, np.nan))
    last: Solution | None = None
    reached = 0.0  # the cumulative level T
    reach = ceiling(structure)
    resources: tuple[sp.csr_matrix, sp.csr_matrix] | None = None
    while active.any():
        solution, state = solve_level(solver, state)
        levels.iterations += 1
        if solution.status is not Status.OPTIMAL:
            levels.failure = solution
            break
        last = solution
        t = increment(structure, solver, solution, state)
        freeze, unsure, target = bottlenecks(structure, solver, solution, state, active)
        slack = 0.0 if solver.vertex else INTERIOR_FREEZE_SLACK
        if exact and unsure.any():
            floor = t * (1.0 - slack)
            freeze |= confirm(solver, state, unsure, target, floor, levels, reach)
        if not freeze.any():
            # Cannot happen with exact duals (see the module docstring); round-off fallback.
            freeze = _largest_dual(solver, solution, state, active)
        reached += t
        levels.level[freeze] = reached
        levels.iteration[freeze] = levels.iterations
        e = structure.entity[freeze]
        levels.weight[freeze] = structure.entity_weight[e] * state.omega[freeze] / state.sigma[e]
        active[freeze] = False
        omega, sigma = rule(active)
        # Every group keeps what this level gave it: the frozen ones for good, the active ones
        # as the floor the next increment is added to.
        if resources is None:
            resources = resource_matrices(structure, solver.blocks)
        wanted = target * (1.0 - slack)
        lower = floors(structure, solver, solution, state, wanted, resources, active)
        levels.floor = lower
        state = LevelState(np.where(active, omega, 0.0), lower, sigma, sigma > 0, np.zeros(n))
    return last, solver, levels


def increment(
    s: ShareStructure, solver: LevelSolver, solution: Solution, state: LevelState
) -> float:
    """The level's increment t as the targets see it: W_e t / σ_e is z_e, which the targets
    are built from. The LP's own t equals it within the level rows' tolerance, which is not
    always within the level's (a last group of weight 1e-6 has its t scaled by 1e6, so 1e-11
    of noise in the model reads as a quarter of its level). A level never falls: a
    tolerance-sized negative step is no step (and no "-0.0")."""
    z = solver.blocks.entity_levels(solution)
    sigma = np.where(state.enforced, state.sigma, 0.0)
    steps = z * sigma / s.entity_weight
    return max(float(steps.max(initial=0.0)), 0.0) + 0.0


def floors(
    s: ShareStructure,
    solver: LevelSolver,
    solution: Solution,
    state: LevelState,
    wanted: FloatArray,
    resources: tuple[sp.csr_matrix, sp.csr_matrix],
    active: BoolArray,
) -> FloatArray:
    """The next level's floors: what this level gave each active group (`wanted`), what the
    frozen ones keep, each capped by its value at this level's point made exact (repaired,
    and lifted where the solver left a requirement below its tolerance unmet, with the time
    that needs taken from the groups still `active`, which the next level raises again). That
    point meets every floor in exact arithmetic, so the next LP has a solution whatever the
    tolerances; a group gives up at most what they left unresolved (a tiny share's time)."""
    kept = np.where(state.omega > 0, wanted, state.lower)
    point = exact_values(s, solver.blocks, solution, kept, resources, active)
    lower: FloatArray = np.minimum(kept, point)
    return lower


def solve_level(solver: LevelSolver, state: LevelState) -> tuple[Solution, LevelState]:
    """The level LP, and the state it was solved in. The last level's point (made exactly
    feasible, see `floors`) meets every floor, so the LP has a solution; a solver can still end
    it infeasible or undecided ("Unknown", "Optimal" without a feasible point) when a floor
    sits at a group's very maximum, next to share rows whose level coefficients are 1e-4 of the
    others'. Then the floors are relaxed by `RECOVERY_SLACKS` in turn, each within a solver's
    own tolerance, until one solves (a warm solver restarts cold first, see `level_solvers`)."""
    solution = solver.solve(state)
    base = state.lower
    for slack in RECOVERY_SLACKS:
        if solution.status is Status.OPTIMAL:
            break
        state = replace(state, lower=base * (1.0 - slack))
        solution = solver.solve(state)
    return solution, state


def bottlenecks(
    s: ShareStructure,
    solver: LevelSolver,
    solution: Solution,
    state: LevelState,
    active: BoolArray,
) -> tuple[BoolArray, BoolArray, FloatArray]:
    """(certain, unsure, target): tight share rows with a non-zero dual are bottlenecks for
    sure; tight ones with a zero dual may or may not be; target_g = L_g + ω_g z_e is the
    value this level gives g."""
    dual_tol, slack_tol = VERTEX_TOLERANCES if solver.vertex else INTERIOR_TOLERANCES
    blocks = solver.blocks
    z = blocks.entity_levels(solution)
    target = state.lower + state.omega * np.maximum(z, 0.0)[s.entity]
    value = blocks.value @ solution.x[: blocks.value.shape[1]]
    candidate = active & (state.omega > 0)
    score = np.where(candidate, np.abs(blocks.share_duals(solution)) * state.omega, 0.0)
    tight = candidate & (value - target <= slack_tol * np.maximum(1.0, target))
    certain = tight & (score > dual_tol * float(score.max()))
    return certain, tight & ~certain, target


def confirm(
    solver: LevelSolver,
    state: LevelState,
    unsure: BoolArray,
    target: FloatArray,
    floor: float,
    levels: Levels,
    reach: FloatArray,
) -> BoolArray:
    """The `unsure` groups that cannot exceed their target while every active group keeps its
    own: maximize Σ e_g over them (t held at the level); a group with e_g > 0 can rise and is
    dropped; when the optimum is 0 the rest are bottlenecks. Each round drops at least one.

    The room and the rise that counts are measured against the target, and against `reach`
    (what the group can reach alone) where the target is small: a group whose entity's level
    has just passed to it starts at 0 (a FIFO entity's next job), and a room relative to 0
    would let nothing rise."""
    slack_tol = (VERTEX_TOLERANCES if solver.vertex else INTERIOR_TOLERANCES)[1]
    blocks = solver.blocks
    remaining = unsure.copy()
    room = TEST_ROOM * np.maximum(target, reach)
    counts = slack_tol * np.maximum(target, TEST_ROOM * reach)
    while remaining.any():
        result = solver.solve(state.with_test(np.where(remaining, room, 0.0), floor))
        levels.tests += 1
        if result.status is not Status.OPTIMAL:
            return np.zeros_like(unsure)  # undecided: freeze none of them now
        value = blocks.value @ result.x[: blocks.value.shape[1]]
        rose = remaining & (value - target > counts)
        if not rose.any():
            return remaining
        remaining &= ~rose
    return remaining


def _largest_dual(
    solver: LevelSolver, solution: Solution, state: LevelState, active: BoolArray
) -> BoolArray:
    duals = solver.blocks.share_duals(solution)
    score = np.where(active & (state.omega > 0), np.abs(duals), 0.0)
    score *= state.omega
    return np.asarray(active & (state.omega > 0) & (score >= score.max()), dtype=bool)
