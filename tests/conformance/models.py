"""Hand-solved models straight at the model layer: every status of the vocabulary, row kinds
(≤, ≥, =, ranges), free and fixed columns, mixed integrality, and duals where they are unique.

Each builder returns a fresh compiled model; `duals` maps a constraint block to its expected
row duals in HiGHS's convention (∂objective/∂bound), worked out by hand in the comment.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from apportion.solver.model import INF, CompiledModel, Model, Sense
from apportion.solver.status import Status


@dataclass(frozen=True)
class ModelCase:
    name: str
    build: Callable[[], CompiledModel]
    status: Status
    objective: float | None = None
    duals: dict[str, list[float]] = field(default_factory=dict)


def _rows(*rows: list[float]) -> np.ndarray:
    return np.array(rows, dtype=float)


def lp_max_le() -> CompiledModel:
    # max 3x + 2y  s.t.  x + y ≤ 4,  x + 3y ≤ 7,  0 ≤ x ≤ 3,  y ≥ 0.
    # x sits at its bound 3, y = 1 from the first row: 11. Raising that row's bound by 1 buys
    # one more y (+2); the second row has slack 1 (dual 0).
    m = Model("lp_max_le")
    v = m.add_variables("v", 2, upper=[3.0, INF], coords=(("name", ["x", "y"]),))
    m.add_constraints("cap", {v: _rows([1, 1], [1, 3])}, upper=[4.0, 7.0])
    m.set_objective({v: [3.0, 2.0]}, Sense.MAXIMIZE)
    return m.compile()


def lp_min_ge_eq() -> CompiledModel:
    # min 2x + 3y  s.t.  x + y ≥ 4,  x − y = c with c = 1,  x, y ≥ 0.
    # x = (4 + c)/2, y = (4 − c)/2 on the binding ≥ row: objective 10 − c/2 = 9.5. With b for
    # the ≥ bound: y = (b − c)/2, x = (b + c)/2, objective 2.5b − 0.5c: duals 2.5 and −0.5.
    m = Model("lp_min_ge_eq")
    v = m.add_variables("v", 2)
    m.add_constraints("demand", {v: _rows([1, 1])}, lower=4.0)
    m.add_constraints("link", {v: _rows([1, -1])}, lower=1.0, upper=1.0)
    m.set_objective({v: [2.0, 3.0]}, Sense.MINIMIZE)
    return m.compile()


def lp_range_free() -> CompiledModel:
    # max x − z + 1 (offset)  s.t.  1 ≤ x + y ≤ 3,  z ≥ −5 as a row,  x free, y ≥ 0.5, z free.
    # x = 3 − 0.5 = 2.5 and z = −5: 2.5 + 5 + 1 = 8.5. The range binds at its top (dual 1),
    # the z row at its bottom: raising −5 lowers the objective one for one (dual −1).
    m = Model("lp_range_free")
    x = m.add_variables("x", 1, lower=-INF)
    y = m.add_variables("y", 1, lower=0.5)
    z = m.add_variables("z", 1, lower=-INF)
    m.add_constraints("range", {x: _rows([1]), y: _rows([1])}, lower=1.0, upper=3.0)
    m.add_constraints("floor", {z: _rows([1])}, lower=-5.0)
    m.set_objective({x: 1.0, z: -1.0}, Sense.MAXIMIZE, offset=1.0)
    return m.compile()


def lp_feasibility() -> CompiledModel:
    # No objective: any point with x + y = 1, x, y ∈ [0, 1] is optimal, value 0.
    m = Model("lp_feasibility")
    v = m.add_variables("v", 2, upper=1.0)
    m.add_constraints("sum", {v: _rows([1, 1])}, lower=1.0, upper=1.0)
    m.set_objective({v: 0.0}, Sense.MINIMIZE)
    return m.compile()


def milp_mixed() -> CompiledModel:
    # max a + b + c + d  s.t.  2a + 2b ≤ 3,  c ≤ 0.5 (bound),  d fixed at 0.25;
    # a, b integer ≥ 0 between two continuous blocks. The LP relaxation gives a + b = 1.5, the
    # integers only 1: optimum 1 + 0.5 + 0.25 = 1.75.
    m = Model("milp_mixed")
    c = m.add_variables("c", 1, upper=0.5)
    ab = m.add_variables("ab", 2, integer=True)
    d = m.add_variables("d", 1, lower=0.25, upper=0.25)
    m.add_constraints("pair", {ab: _rows([2, 2])}, upper=3.0)
    m.set_objective({c: 1.0, ab: 1.0, d: 1.0}, Sense.MAXIMIZE)
    return m.compile()


def milp_knapsack() -> CompiledModel:
    # Binary knapsack: values (5, 4, 3), weights (2, 3, 1) in ≤ 5, (4, 1, 2) ≤ 11, (3, 4, 2) ≤ 8.
    # Subsets: {a,b} weighs (5, 5, 7) → 9; {a,c} → 8; {b,c} → 7; {a,b,c} breaks row 1. So 9.
    m = Model("milp_knapsack")
    v = m.add_variables("pick", 3, upper=1.0, integer=True)
    m.add_constraints("weight", {v: _rows([2, 3, 1], [4, 1, 2], [3, 4, 2])}, upper=[5, 11, 8])
    m.set_objective({v: [5.0, 4.0, 3.0]}, Sense.MAXIMIZE)
    return m.compile()


def lp_infeasible() -> CompiledModel:
    # x + y ≤ 1 and x + y ≥ 2 cannot both hold.
    m = Model("lp_infeasible")
    v = m.add_variables("v", 2)
    m.add_constraints("low", {v: _rows([1, 1])}, upper=1.0)
    m.add_constraints("high", {v: _rows([1, 1])}, lower=2.0)
    m.set_objective({v: 1.0}, Sense.MINIMIZE)
    return m.compile()


def milp_infeasible() -> CompiledModel:
    # 2x = 1 with x integer: the LP relaxation (x = 0.5) is feasible, the MILP is not.
    m = Model("milp_infeasible")
    v = m.add_variables("v", 1, integer=True, upper=10.0)
    m.add_constraints("half", {v: _rows([2])}, lower=1.0, upper=1.0)
    m.set_objective({v: 1.0}, Sense.MAXIMIZE)
    return m.compile()


def lp_unbounded() -> CompiledModel:
    # max x + y s.t. x − y ≤ 1, x, y ≥ 0: x = y + 1 grows without end.
    m = Model("lp_unbounded")
    v = m.add_variables("v", 2)
    m.add_constraints("gap", {v: _rows([1, -1])}, upper=1.0)
    m.set_objective({v: 1.0}, Sense.MAXIMIZE)
    return m.compile()


MODEL_CASES = [
    ModelCase("LP max, ≤ rows", lp_max_le, Status.OPTIMAL, 11.0, {"cap": [2.0, 0.0]}),
    ModelCase(
        "LP min, ≥ and = rows",
        lp_min_ge_eq,
        Status.OPTIMAL,
        9.5,
        {"demand": [2.5], "link": [-0.5]},
    ),
    ModelCase(
        "LP range row, free columns, offset",
        lp_range_free,
        Status.OPTIMAL,
        8.5,
        {"range": [1.0], "floor": [-1.0]},
    ),
    ModelCase("LP without objective", lp_feasibility, Status.OPTIMAL, 0.0),
    ModelCase("MILP mixed integrality", milp_mixed, Status.OPTIMAL, 1.75),
    ModelCase("MILP binary knapsack", milp_knapsack, Status.OPTIMAL, 9.0),
    ModelCase("LP infeasible", lp_infeasible, Status.INFEASIBLE),
    ModelCase("MILP infeasible", milp_infeasible, Status.INFEASIBLE),
    ModelCase("LP unbounded", lp_unbounded, Status.UNBOUNDED),
]
