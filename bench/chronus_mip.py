"""A stand-in for the part of python-mip that Chronus's `solver.py` calls, solved by HiGHS.

Chronus builds its lease MILPs with python-mip on Gurobi (`Model(solver_name=GRB)`), which a
bench machine has neither of. `bench.chronus_fidelity` copies this file into a scratch folder
as `mip/__init__.py`, ahead of the reference on its path: binary variables, linear expressions
(`xsum`, `+`, `*`, comparisons), `maximize`, `m += constraint`, `m.optimize(max_seconds=...)`
and `var.x` (None when no solution was found, as python-mip answers then). It is solved by
`scipy.optimize.milp` (HiGHS) within the same time limit Chronus gives Gurobi.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import lil_matrix

GRB = "GRB"
CBC = "CBC"
BINARY = "B"
__all__ = ["BINARY", "CBC", "GRB", "LinExpr", "Model", "Var", "maximize", "minimize", "xsum"]

Constraint = tuple[str, "LinExpr"]


class LinExpr:
    """Σ coefficient · variable + constant."""

    def __init__(self, terms: dict[int, float] | None = None, const: float = 0.0) -> None:
        self.terms = dict(terms or {})
        self.const = const

    @staticmethod
    def of(x: Any) -> LinExpr:
        return x if isinstance(x, LinExpr) else LinExpr({}, float(x))

    def __add__(self, other: Any) -> LinExpr:
        o = LinExpr.of(other)
        terms = dict(self.terms)
        for k, v in o.terms.items():
            terms[k] = terms.get(k, 0.0) + v
        return LinExpr(terms, self.const + o.const)

    __radd__ = __add__

    def __neg__(self) -> LinExpr:
        return self * -1.0

    def __sub__(self, other: Any) -> LinExpr:
        return self + (-LinExpr.of(other))

    def __rsub__(self, other: Any) -> LinExpr:
        return LinExpr.of(other) - self

    def __mul__(self, c: Any) -> LinExpr:
        c = float(c)
        return LinExpr({k: v * c for k, v in self.terms.items()}, self.const * c)

    __rmul__ = __mul__

    def __truediv__(self, c: Any) -> LinExpr:
        return self * (1.0 / float(c))

    def __le__(self, other: Any) -> Constraint:
        return ("<=", self - other)

    def __ge__(self, other: Any) -> Constraint:
        return (">=", self - other)

    def __eq__(self, other: Any) -> Constraint:  # type: ignore[override]
        return ("==", self - other)

    __hash__ = object.__hash__


class Var(LinExpr):
    """A binary variable; `x` is its value in the last solution (None without one)."""

    def __init__(self, model: Model, index: int) -> None:
        super().__init__({index: 1.0})
        self.model, self.index = model, index

    @property
    def x(self) -> float | None:
        solution = self.model.solution
        return None if solution is None else float(solution[self.index])


def xsum(items: Iterable[Any]) -> LinExpr:
    out = LinExpr()
    for item in items:
        out = out + item
    return out


def maximize(expr: Any) -> tuple[str, LinExpr]:
    return ("max", LinExpr.of(expr))


def minimize(expr: Any) -> tuple[str, LinExpr]:
    return ("min", LinExpr.of(expr))


class Model:
    """Binary variables, linear constraints and one objective, solved by HiGHS."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.size = 0
        self.constraints: list[Constraint] = []
        self.objective: tuple[str, LinExpr] = ("max", LinExpr())
        self.solution: np.ndarray | None = None

    def add_var(self, var_type: str = BINARY, **kwargs: Any) -> Var:
        self.size += 1
        return Var(self, self.size - 1)

    def __iadd__(self, constraint: Constraint) -> Model:
        self.constraints.append(constraint)
        return self

    def optimize(self, max_seconds: float | None = None, **kwargs: Any) -> int:
        sense, expr = self.objective
        cost = np.zeros(self.size)
        for k, v in expr.terms.items():
            cost[k] += v
        rows = lil_matrix((len(self.constraints), self.size))
        low = np.full(len(self.constraints), -np.inf)
        high = np.full(len(self.constraints), np.inf)
        for r, (op, e) in enumerate(self.constraints):
            for k, v in e.terms.items():
                rows[r, k] += v
            if op in (">=", "=="):
                low[r] = -e.const
            if op in ("<=", "=="):
                high[r] = -e.const
        options = {"time_limit": float(max_seconds)} if max_seconds else {}
        constraints = [LinearConstraint(rows.tocsr(), low, high)] if self.constraints else []
        result = milp(
            -cost if sense == "max" else cost,
            constraints=constraints,
            integrality=np.ones(self.size),
            bounds=Bounds(0, 1),
            options=options,
        )
        self.solution = None if result.x is None else np.round(result.x)
        return int(result.status)
