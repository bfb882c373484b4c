"""Solving a sequence of share LPs that differ in a few coefficients (water filling).

`WarmLevels` keeps the model in a backend session (`Feature.SESSION`) and applies only the
changes, so each re-solve starts from the previous basis (primal simplex: freezing keeps the
last point feasible). `ColdLevels` rebuilds and solves each LP on any backend (interior-point
answers included); the water-filling loop treats their duals with looser tolerances.

Both end with the Pareto LP of `formulations/fairness/pareto.py` when asked (`pareto`): the
floors of the given state and the objective Σ_g n_g v_g. The warm solvers keep their model, in
which the level t then carries no value, so it gets a cost of −1 and sits at its floor (where it
is free, as when every group is frozen, it would otherwise be an unbounded direction of zero
cost); `ColdLevels` builds it with the floors as row bounds and no level.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol

import numpy as np

from apportion.formulations.fairness.pareto import as_floors, total_share_costs
from apportion.formulations.fairness.share_lp import (
    LevelState,
    ShareBlocks,
    ShareStructure,
    build_share_lp,
    entity_scales,
    level_scale,
    share_level_coefficients,
)
from apportion.solver.arraytypes import FloatArray
from apportion.solver.backends import LpMethod, Solution
from apportion.solver.context import RecordedSession, SolveContext, SolveRequest
from apportion.solver.model import INF, Block, Sense
from apportion.solver.status import Status


class LevelSolver(Protocol):
    blocks: ShareBlocks
    vertex: bool  # answers are simplex vertices (exact duals) rather than interior points

    def solve(self, state: LevelState) -> Solution: ...

    def pareto(self, state: LevelState, time_limit: float | None = None) -> Solution:
        """The Pareto LP over the floors of `state` (see the module docstring)."""
        ...


def level_solver(
    structure: ShareStructure, state: LevelState, ctx: SolveContext, lp_method: LpMethod
) -> LevelSolver:
    """Warm re-solves when the backend keeps sessions (HiGHS, the default); cold ones
    otherwise, and when the model goes to a backend for its shape (one cold interior point
    per level beats a session at the sizes where that is chosen)."""
    model, blocks = build_share_lp(structure, state)
    if ctx.for_its_shape(model, lp_method):
        return ColdLevels(structure, ctx, lp_method)
    kept = ctx.session(model, lp_method)
    if kept is None:
        return ColdLevels(structure, ctx, lp_method)
    return WarmLevels(structure, state, ctx, blocks, kept, lp_method=lp_method)


def single_solver(
    structure: ShareStructure, state: LevelState, ctx: SolveContext, lp_method: LpMethod, name: str
) -> LevelSolver:
    """Max-min's one-level model (no test columns), kept in a session when the backend keeps
    them, so that the Pareto LP starts from the max-min basis; solved cold otherwise."""
    model, blocks = build_share_lp(structure, state, single=True, name=name)
    kept = ctx.session(model, lp_method)
    if kept is None:
        return ColdLevels(structure, ctx, lp_method, single=True, name=name)
    return WarmOnce(structure, ctx, blocks, kept, name=name)


class WarmOnce:
    """The max-min LP, then the Pareto LP on the same session: t's floor and the costs change,
    the max-min vertex stays feasible, and the primal simplex continues from it."""

    vertex = True

    def __init__(
        self,
        structure: ShareStructure,
        ctx: SolveContext,
        blocks: ShareBlocks,
        session: RecordedSession,
        name: str = "share",
    ) -> None:
        self.structure = structure
        self.ctx = ctx
        self.blocks = blocks
        self.session = session
        self.name = name

    def solve(self, state: LevelState) -> Solution:
        solution = self.session.solve()
        if self.ctx.options.lp_method is LpMethod.AUTO and not self.ctx.options.solver:
            self.session.keep_point(primal=True)
        return solution

    def pareto(self, state: LevelState, time_limit: float | None = None) -> Solution:
        solution = self._pareto(state)
        if solution.status is not Status.OPTIMAL and not self.ctx.budget.spent():
            # As in `WarmLevels._restart`: the interior point with crossover where the simplex
            # ended without an optimum.
            model, blocks = build_share_lp(self.structure, state, single=True, name=self.name)
            kept = self.ctx.session(model, LpMethod.IPM)
            if kept is not None:
                self.session, self.blocks = kept, blocks
                solution = self._pareto(state)
        return solution

    def _pareto(self, state: LevelState) -> Solution:
        b = self.blocks
        costs = total_share_costs(b.value, self.structure.groups.count)
        floor = np.array([state.t_floor / b.level_scale])
        self.session.change_col_bounds(np.array([b.t.start]), floor, np.array([INF]))
        columns = np.r_[np.arange(costs.size), b.t.start]
        self.session.change_col_costs(columns, np.r_[costs, -1.0])
        return self.session.solve()


class WarmLevels:
    vertex = True

    def __init__(
        self,
        structure: ShareStructure,
        state: LevelState,
        ctx: SolveContext,
        blocks: ShareBlocks,
        session: RecordedSession,
        primal: bool = True,
        lp_method: LpMethod = LpMethod.AUTO,
    ) -> None:
        # Freezing only relaxes the active rows, so the last point stays feasible and the primal
        # simplex continues from it, in far fewer iterations than the dual simplex needs.
        self.primal = primal
        self.blocks = blocks
        self.structure = structure
        self.ctx = ctx
        self.session = session
        self.coefficients = share_level_coefficients(
            structure, state, blocks.row_scale, blocks.entity_scale
        )
        self.state = state  # states are replaced, never mutated
        self.lp_method = lp_method
        self._solved = False
        self.costs: FloatArray | None = None  # the Pareto objective, once it is in force

    def solve(self, state: LevelState) -> Solution:
        self._apply(state)
        return self._run(state)

    def pareto(self, state: LevelState, time_limit: float | None = None) -> Solution:
        # The session keeps the time limit it was opened with; the budget bounds it already.
        self._apply(state)
        self.costs = total_share_costs(self.blocks.value, self.structure.groups.count)
        self._use_costs()
        return self._run(state)

    def _use_costs(self) -> None:
        """Σ n_g v_g on the value columns, −1 on t (its floor), 0 on the exceed columns."""
        assert self.costs is not None
        b = self.blocks
        e, _, _ = b.level_parts()
        columns = np.r_[np.arange(self.costs.size), np.arange(e.start, e.start + e.size), b.t.start]
        self.session.change_col_costs(columns, np.r_[self.costs, np.zeros(e.size), -1.0])

    def _run(self, state: LevelState) -> Solution:
        solution = self.session.solve()
        if solution.status is not Status.OPTIMAL and not self.ctx.budget.spent():
            # A warm re-solve can stall or end wrongly where a fresh one does not (HiGHS's
            # primal simplex: "Unknown" warm, optimal cold on a 19-job hierarchical level;
            # "Infeasible" after a level rescale): start a new session from this state and
            # carry on warm from there.
            solution = self._restart(state)
        chosen = self.ctx.options.lp_method is not LpMethod.AUTO or self.ctx.options.solver
        if not self._solved and not chosen:  # a user's choice of method stays in force
            self.session.keep_point(primal=self.primal)
        self._solved = True
        return solution

    def _restart(self, state: LevelState) -> Solution:
        """`state` in a new session, by the LP method asked for, then, if that still ends
        without an optimum, by the interior point with crossover to a vertex: the simplex can
        end "optimal" on a point its own unscaled check rejects (a row 6e-7 off where floors
        sit 1e-12 apart), which that does not. Later solves carry on (by simplex) from it."""
        model, self.blocks = build_share_lp(self.structure, state)
        solution = Solution(Status.ERROR, None, np.zeros(0), "", "")
        for method in (self.lp_method, LpMethod.IPM):
            kept = self.ctx.session(model, method)
            if kept is None:
                return self.ctx.solve(SolveRequest(model, self.lp_method))
            self.session = kept
            self.coefficients = share_level_coefficients(
                self.structure, state, self.blocks.row_scale, self.blocks.entity_scale
            )
            self.state, self._solved = state, False
            if self.costs is not None:
                self._use_costs()
            solution = self.session.solve()
            if solution.status is Status.OPTIMAL or self.ctx.budget.spent():
                break
        return solution

    def _apply(self, new: LevelState) -> None:
        old, s, b = self.state, self.structure, self.blocks
        _, z, level = b.level_parts()
        # As the active set shrinks and the weights change, r and the r_e change with them (see
        # `share_lp`): every share row whose coefficient moves gets the new one.
        r = level_scale(s, b.row_scale, new, keep=b.level_scale)
        r_e = entity_scales(s, new, r)
        coefficients = share_level_coefficients(s, new, b.row_scale, r_e)
        changed = np.flatnonzero(coefficients != self.coefficients)
        self.session.change_coefficients(
            b.share.start + changed, z.start + s.entity[changed], coefficients[changed]
        )
        rescaled = r != b.level_scale
        self.blocks = b = replace(b, level_scale=r, entity_scale=r_e)
        self.coefficients = coefficients
        lowered = np.flatnonzero(new.lower != old.lower)
        self.session.change_row_bounds(
            b.share.start + lowered,
            new.lower[lowered] / b.row_scale[lowered],
            np.full(lowered.size, INF),
        )
        switched = np.flatnonzero(new.enforced != old.enforced)
        bound = np.where(new.enforced[switched], 0.0, INF)
        self.session.change_row_bounds(level.start + switched, -bound, bound)
        self._apply_test(new, rescaled)
        self.state = new

    def _apply_test(self, new: LevelState, rescaled: bool) -> None:
        """Switch between maximizing t and the bottleneck test (e bounds, t floor, costs)."""
        b, old = self.blocks, self.state
        e, _, _ = b.level_parts()
        opened = np.flatnonzero(new.exceed != old.exceed)
        self.session.change_col_bounds(
            e.start + opened, np.zeros(opened.size), new.exceed[opened] / b.row_scale[opened]
        )
        if new.t_floor != old.t_floor or rescaled:
            self.session.change_col_bounds(
                np.array([b.t.start]), np.array([new.t_floor / b.level_scale]), np.array([INF])
            )
        if new.testing != old.testing:
            costs = np.zeros(e.size + 1)
            if new.testing:
                costs[:-1] = 1.0
            else:
                costs[-1] = 1.0
            self.session.change_col_costs(
                np.r_[np.arange(e.start, e.start + e.size), b.t.start], costs
            )


class ColdLevels:
    vertex = False

    def __init__(
        self,
        structure: ShareStructure,
        ctx: SolveContext,
        lp_method: LpMethod,
        single: bool = False,
        name: str = "share",
    ) -> None:
        self.structure = structure
        self.ctx = ctx
        self.lp_method = lp_method
        self.single = single
        self.name = name

    def solve(self, state: LevelState) -> Solution:
        model, self.blocks = build_share_lp(self.structure, state, self.single, self.name)
        return self.ctx.solve(SolveRequest(model, self.lp_method))

    def pareto(self, state: LevelState, time_limit: float | None = None) -> Solution:
        # Built for this one solve, without test columns or level variables (`single`), and
        # with the level in the row bounds: its column would be dense and carry nothing, and a
        # dense column costs an interior point on every iteration.
        floors = as_floors(self.structure, state)
        model, b = build_share_lp(self.structure, floors, True, f"{self.name}_pareto")
        self.blocks = b
        costs = total_share_costs(b.value, self.structure.groups.count)
        objective: dict[Block, FloatArray | float] = {b.x.block: costs[: b.x.block.size], b.t: -1.0}
        if b.y is not None:
            objective[b.y] = costs[b.x.block.size :]
        model.set_objective(objective, Sense.MAXIMIZE)
        # A second stage (or the ceiling shortcut), never the policy's own model.
        request = SolveRequest(model, self.lp_method, time_limit=time_limit, auxiliary=True)
        return self.ctx.solve(request)
