"""A small model layer: named variable and constraint blocks compiled to one sparse LP/MILP.

Formulations add blocks (`x[job, gpu]`, `capacity[gpu]`) as whole sparse matrices, never one
scalar at a time; `compile()` stacks them into a single CSC matrix that every backend consumes.
Blocks keep their coordinates so a solution maps back to job ids and names are only rendered when
someone asks (model export, binding-constraint reports).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np
from numpy.typing import ArrayLike, NDArray

from apportion.solver.sparse import sp

INF = float("inf")


class Sense(StrEnum):
    MINIMIZE = "minimize"
    MAXIMIZE = "maximize"


class Take(Sequence[object]):
    """`names[index[i]]` without building the list until a label is actually rendered."""

    def __init__(self, names: Sequence[object], positions: NDArray[np.int64]) -> None:
        self.names = names
        self.positions = positions

    def __len__(self) -> int:
        return int(self.positions.size)

    def __getitem__(self, i: int) -> object:  # type: ignore[override]
        return self.names[int(self.positions[i])]


Coords = tuple[tuple[str, Sequence[object]], ...]


@dataclass(frozen=True, eq=False)
class Block:
    """A contiguous, named range of variables or constraints."""

    name: str
    start: int
    size: int
    coords: Coords = ()

    @property
    def span(self) -> slice:
        return slice(self.start, self.start + self.size)

    def labels(self) -> list[str]:
        """`name[c1,c2]` per element; coordinates are per-element sequences of equal length."""
        if not self.coords:
            return (
                [self.name] if self.size == 1 else [f"{self.name}[{i}]" for i in range(self.size)]
            )
        columns = [list(map(str, values)) for _, values in self.coords]
        return [f"{self.name}[{','.join(parts)}]" for parts in zip(*columns, strict=True)]


@dataclass
class Model:
    """A linear model under construction."""

    name: str
    sense: Sense = Sense.MINIMIZE
    variables: list[Block] = field(default_factory=list)
    constraints: list[Block] = field(default_factory=list)
    _col_lower: list[NDArray[np.float64]] = field(default_factory=list)
    _col_upper: list[NDArray[np.float64]] = field(default_factory=list)
    _integer: list[NDArray[np.bool_]] = field(default_factory=list)
    _rows: list[dict[Block, sp.spmatrix]] = field(default_factory=list)
    _row_lower: list[NDArray[np.float64]] = field(default_factory=list)
    _row_upper: list[NDArray[np.float64]] = field(default_factory=list)
    _cost: dict[Block, NDArray[np.float64]] = field(default_factory=dict)
    offset: float = 0.0

    @property
    def num_cols(self) -> int:
        return sum(b.size for b in self.variables)

    @property
    def num_rows(self) -> int:
        return sum(b.size for b in self.constraints)

    def add_variables(
        self,
        name: str,
        size: int,
        *,
        lower: ArrayLike = 0.0,
        upper: ArrayLike = INF,
        integer: bool = False,
        coords: Coords = (),
    ) -> Block:
        block = Block(name, self.num_cols, size, coords)
        self.variables.append(block)
        self._col_lower.append(np.broadcast_to(np.asarray(lower, float), (size,)))
        self._col_upper.append(np.broadcast_to(np.asarray(upper, float), (size,)))
        self._integer.append(np.full(size, integer))
        return block

    def add_constraints(
        self,
        name: str,
        terms: Mapping[Block, sp.spmatrix | NDArray[np.float64]],
        *,
        lower: ArrayLike = -INF,
        upper: ArrayLike = INF,
        coords: Coords = (),
    ) -> Block:
        """Rows `lower ≤ Σ_b terms[b] @ b ≤ upper`; each term has shape (rows, b.size)."""
        sizes = {t.shape[0] for t in terms.values()}
        if len(sizes) != 1:
            raise ValueError(f"constraint block {name!r}: terms disagree on the row count {sizes}")
        size = sizes.pop()
        for var, term in terms.items():
            if term.shape[1] != var.size:
                raise ValueError(
                    f"constraint block {name!r}: term for {var.name!r} has wrong width"
                )
        block = Block(name, self.num_rows, size, coords)
        self.constraints.append(block)
        self._rows.append({v: sp.csc_matrix(t) for v, t in terms.items()})
        self._row_lower.append(np.broadcast_to(np.asarray(lower, float), (size,)))
        self._row_upper.append(np.broadcast_to(np.asarray(upper, float), (size,)))
        return block

    def set_objective(
        self, terms: Mapping[Block, ArrayLike], sense: Sense, offset: float = 0.0
    ) -> None:
        self.sense = sense
        self.offset = offset
        self._cost = {v: np.broadcast_to(np.asarray(c, float), (v.size,)) for v, c in terms.items()}

    def compile(self) -> CompiledModel:
        n = self.num_cols
        cost = np.zeros(n)
        for var, c in self._cost.items():
            cost[var.span] = c
        matrix = self._stack_rows()
        return CompiledModel(
            name=self.name,
            sense=self.sense,
            matrix=matrix,
            cost=cost,
            offset=self.offset,
            col_lower=_concat(self._col_lower),
            col_upper=_concat(self._col_upper),
            row_lower=_concat(self._row_lower),
            row_upper=_concat(self._row_upper),
            integer=np.concatenate(self._integer) if self._integer else np.zeros(0, bool),
            variables=tuple(self.variables),
            constraints=tuple(self.constraints),
        )

    def _stack_rows(self) -> sp.csc_matrix:
        # Each constraint block becomes one horizontal strip, padded with empty column ranges.
        strips = []
        for block, terms in zip(self.constraints, self._rows, strict=True):
            strip = [terms.get(v, sp.csc_matrix((block.size, v.size))) for v in self.variables]
            strips.append(strip)
        if not strips or not self.variables:
            return sp.csc_matrix((self.num_rows, self.num_cols))
        return sp.csc_matrix(sp.bmat(strips, format="csc"))


def _concat(parts: list[NDArray[np.float64]]) -> NDArray[np.float64]:
    return np.concatenate(parts) if parts else np.zeros(0)


@dataclass(frozen=True, eq=False)
class CompiledModel:
    """min/max cᵀx + offset  s.t.  row_lower ≤ A x ≤ row_upper,  col_lower ≤ x ≤ col_upper."""

    name: str
    sense: Sense
    matrix: sp.csc_matrix
    cost: NDArray[np.float64]
    offset: float
    col_lower: NDArray[np.float64]
    col_upper: NDArray[np.float64]
    row_lower: NDArray[np.float64]
    row_upper: NDArray[np.float64]
    integer: NDArray[np.bool_]
    variables: tuple[Block, ...]
    constraints: tuple[Block, ...]

    @property
    def num_cols(self) -> int:
        return int(self.matrix.shape[1])

    @property
    def num_rows(self) -> int:
        return int(self.matrix.shape[0])

    @property
    def is_mip(self) -> bool:
        return bool(self.integer.any())

    def col_names(self) -> list[str]:
        return [label for b in self.variables for label in b.labels()]

    def row_names(self) -> list[str]:
        return [label for b in self.constraints for label in b.labels()]

    def block(self, name: str) -> Block:
        for b in (*self.variables, *self.constraints):
            if b.name == name:
                return b
        raise KeyError(name)
