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
from typing import Any

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


#: "A few" linking columns: a block shape has at most this many.
MAX_LINKING_COLUMNS = 32


@dataclass(frozen=True, eq=False)
class BlockShape:
    """A model made of many small blocks joined by a few linking rows and columns, declared by
    the formulation that builds it (a backend with `Feature.BLOCKS` exploits it).

    Block b owns the rows `rows[b]` and the columns `cols[b]` (model indices, −1 where a block
    has fewer than the others: padding). Every other row is a linking row and every other
    column a linking column. A block's columns appear only in its own rows and in at most one
    linking row, the same one for every block's column in the same position (slot) c; its rows
    hold only its own columns and linking columns. The share LPs of the fairness family have
    this shape: a job group's share and time rows and its columns X_g·, the capacity rows and
    the level column(s) linking them."""

    rows: NDArray[np.int64]  # (blocks, rows per block)
    cols: NDArray[np.int64]  # (blocks, slots per block)

    @property
    def num_blocks(self) -> int:
        return int(self.rows.shape[0])


@dataclass
class Model:
    """A linear model under construction."""

    name: str
    sense: Sense = Sense.MINIMIZE
    variables: list[Block] = field(default_factory=list)
    constraints: list[Block] = field(default_factory=list)
    _col_lower: list[NDArray[np.float64]] = field(default_factory=list)
    _col_upper: list[NDArray[np.float64]] = field(default_factory=list)
    _integer: list[NDArray[np.bool_]] = field(default_factory=list)  # one flag per block
    _rows: list[dict[Block, Entries]] = field(default_factory=list)
    _row_lower: list[NDArray[np.float64]] = field(default_factory=list)
    _row_upper: list[NDArray[np.float64]] = field(default_factory=list)
    _cost: dict[Block, NDArray[np.float64]] = field(default_factory=dict)
    offset: float = 0.0
    shape: BlockShape | None = None

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
        self._col_lower.append(_per_element(lower, size))
        self._col_upper.append(_per_element(upper, size))
        self._integer.append(np.asarray(integer, bool))
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
        self._rows.append({v: _entries(t) for v, t in terms.items()})
        self._row_lower.append(_per_element(lower, size))
        self._row_upper.append(_per_element(upper, size))
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
            col_lower=_concat(self._col_lower, self.variables),
            col_upper=_concat(self._col_upper, self.variables),
            row_lower=_concat(self._row_lower, self.constraints),
            row_upper=_concat(self._row_upper, self.constraints),
            integer=_concat(self._integer, self.variables, bool),
            variables=tuple(self.variables),
            constraints=tuple(self.constraints),
            shape=self.shape,
        )

    def _stack_rows(self) -> sp.csc_matrix:
        # Every term's entries, shifted to its constraint block's rows and its variable block's
        # columns, make one matrix: no empty blocks are built for the pairs without a term.
        rows, cols, values = [], [], []
        for block, terms in zip(self.constraints, self._rows, strict=True):
            for var, (row, col, data) in terms.items():
                rows.append(row + block.start)
                cols.append(col + var.start)
                values.append(data.astype(float, copy=False))
        shape = (self.num_rows, self.num_cols)
        if not rows:
            return sp.csc_matrix(shape)
        coordinates = (np.concatenate(rows), np.concatenate(cols))
        return sp.csc_matrix((np.concatenate(values), coordinates), shape=shape)


#: A term's non-zeros as (rows, columns, values), in the order of its COO form.
Entries = tuple[NDArray[np.integer], NDArray[np.integer], NDArray[np.generic]]


def _entries(term: sp.spmatrix | NDArray[np.float64]) -> Entries:
    """The term's entries as `sp.coo_matrix(term)` holds them, read straight from a dense or
    CSR term (building a COO matrix costs more than a small model's whole compile)."""
    if isinstance(term, np.ndarray):
        rows, cols = np.nonzero(term)
        return rows, cols, term[rows, cols]
    if getattr(term, "format", None) == "csr":
        counts = np.diff(term.indptr)
        return np.repeat(np.arange(term.shape[0]), counts), term.indices, term.data
    coo = sp.coo_matrix(term)
    return coo.row, coo.col, coo.data


def _per_element(values: ArrayLike, size: int) -> NDArray[np.float64]:
    """`values` for a block of `size`: one value for all of it (kept as it is, spread when the
    model is compiled) or one per element."""
    array = np.asarray(values, float)
    if array.ndim == 0 or array.shape == (size,):
        return array
    return np.broadcast_to(array, (size,))  # a length-1 array, or the error naming the shapes


def _concat(parts: list[NDArray[Any]], blocks: list[Block], dtype: type = float) -> NDArray[Any]:
    """The blocks' values end to end, one value per element."""
    out: NDArray[Any] = np.empty(sum(b.size for b in blocks), dtype=dtype)
    for block, part in zip(blocks, parts, strict=True):
        out[block.span] = part
    return out


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
    shape: BlockShape | None = None

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
