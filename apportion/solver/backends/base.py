"""What a backend is: a solver interface that takes a compiled model and returns a solution."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import ClassVar, Protocol

import numpy as np
from numpy.typing import NDArray

from apportion.solver.model import Block, CompiledModel
from apportion.solver.status import Status, Termination


class Feature(StrEnum):
    LP = "lp"
    MILP = "milp"
    DUALS = "duals"
    WARM_START = "warm_start"
    EXPORT = "export"  # writes a model as .lp / .mps (`Backend.export`)
    INCUMBENTS = "incumbents"  # calls SolveSettings.on_incumbent and on_bound in a MILP solve
    SESSION = "session"  # keeps a model between re-solves that change a few numbers
    # Solves LPs of a declared block shape (`CompiledModel.shape`), at any size; models
    # without one are not its to solve (`Feature.LP` is solving any LP).
    BLOCKS = "blocks"


# Called with each improving MILP solution (model coordinates) and the solver's dual bound at
# that moment; returning True asks the solver to stop (the answer then carries a limit status).
OnIncumbent = Callable[[NDArray[np.float64], float], bool]
Scalar = bool | int | float | str
# Called at the solver's regular progress checks with its dual bound; returning True asks it to
# stop. Lets a caller stop on a test the solver cannot make itself (e.g. a bound compared with
# a value computed outside the model).
OnBound = Callable[[float], bool]


class LpMethod(StrEnum):
    """How to solve an LP; formulations hint, users may override."""

    AUTO = "auto"
    SIMPLEX = "simplex"
    IPM = "ipm"
    PDLP = "pdlp"


@dataclass(frozen=True)
class SolveSettings:
    """Backend-independent knobs for one solve."""

    time_limit: float | None = None
    #: Counted work in place of `time_limit` (units of `backends.work`): backends turn it into
    #: iteration and node limits, so the answer does not depend on the machine's speed or load.
    work_limit: float | None = None
    mip_rel_gap: float | None = None
    threads: int | None = None
    lp_method: LpMethod = LpMethod.AUTO
    solver: str | None = None  # the backend's own sub-solver, e.g. CLARABEL or CBC
    verbose: bool = False
    # A MILP starting point as (column indices, values); columns left out are completed by the
    # solver. Backends without WARM_START ignore it.
    start: tuple[NDArray[np.int64], NDArray[np.float64]] | None = field(default=None, compare=False)
    # Search settings a formulation knows pay off on its models, per backend name (e.g. HiGHS
    # heuristics that only cost time there): each backend reads its own entry and ignores the
    # rest. They never change what counts as optimal.
    tuning: Mapping[str, Mapping[str, Scalar]] = field(default_factory=dict, compare=False)
    # Formulations that check solutions against something the model leaves out watch the
    # incumbents and the bound; backends without INCUMBENTS never call either.
    on_incumbent: OnIncumbent | None = field(default=None, compare=False)
    on_bound: OnBound | None = field(default=None, compare=False)


@dataclass
class Solution:
    """A backend's answer in model coordinates."""

    status: Status
    objective: float | None
    x: NDArray[np.float64]
    backend: str
    solver: str
    detail: str = ""  # the backend's own status text
    row_dual: NDArray[np.float64] | None = None
    #: Reduced costs c − Aᵀ·row_dual: ∂objective/∂(the column's active bound), in the row
    #: duals' convention; None whenever `row_dual` is.
    col_dual: NDArray[np.float64] | None = None
    iterations: int = 0
    #: Time the backend spent building its own copy of the model (cvxpy expressions and
    #: canonicalization, PuLP objects); the model layer's compile is booked by the caller.
    build_seconds: float = 0.0
    solve_seconds: float = 0.0
    mip_gap: float | None = None
    #: The solve's counted work (units of `solver.backends.work`), charged to a work clock.
    work: float = 0.0
    extra: dict[str, float] = field(default_factory=dict)
    #: Why the solver stopped, from the backend's own table (`UNKNOWN` for codes it lacks).
    termination: Termination = Termination.UNKNOWN

    def value(self, block: Block) -> NDArray[np.float64]:
        return self.x[block.span]

    def dual(self, block: Block) -> NDArray[np.float64]:
        if self.row_dual is None:
            raise ValueError("this solution carries no duals")
        return self.row_dual[block.span]

    def reduced_cost(self, block: Block) -> NDArray[np.float64]:
        if self.col_dual is None:
            raise ValueError("this solution carries no duals")
        return self.col_dual[block.span]


def reduced_costs(
    model: CompiledModel, row_dual: NDArray[np.float64] | None
) -> NDArray[np.float64] | None:
    """c − Aᵀy for backends whose solver reports only row duals (None without them)."""
    if row_dual is None:
        return None
    out: NDArray[np.float64] = model.cost - model.matrix.T @ row_dual
    return out


class Session(Protocol):
    """One model kept by a backend across re-solves that change a few of its numbers, so each
    re-solve starts from the last one's basis (`Feature.SESSION`)."""

    def change_coefficients(
        self, rows: NDArray[np.int64], cols: NDArray[np.int64], values: NDArray[np.float64]
    ) -> None: ...

    def change_row_bounds(
        self, rows: NDArray[np.int64], lower: NDArray[np.float64], upper: NDArray[np.float64]
    ) -> None: ...

    def change_col_bounds(
        self, cols: NDArray[np.int64], lower: NDArray[np.float64], upper: NDArray[np.float64]
    ) -> None: ...

    def change_col_costs(self, cols: NDArray[np.int64], costs: NDArray[np.float64]) -> None: ...

    def keep_point(self, primal: bool) -> None:
        """Re-solve from the last basis with a simplex method: the primal one when the changes
        keep the last point feasible, else the dual one."""

    def solve(self) -> Solution: ...


class Backend(ABC):
    """A solver interface. Subclasses declare what they can do instead of callers guessing."""

    name: ClassVar[str]
    features: ClassVar[frozenset[Feature]]

    @abstractmethod
    def available_solvers(self) -> list[str]:
        """Sub-solvers usable on this machine, default first."""

    def features_for(self, solver: str | None) -> frozenset[Feature]:
        """What this backend can do with `solver` (None = its default); by default the same
        for every sub-solver. Backends whose sub-solvers differ (cvxpy + SCS has no MILP)
        override this."""
        return self.features

    def resolve_solver(self, name: str | None) -> str | None:
        """The canonical spelling of sub-solver `name` (case-insensitive), None for the
        default; raises ValueError naming the available ones for an unknown name."""
        if name is None:
            return None
        available = self.available_solvers()
        for known in available:
            if known.lower() == name.strip().lower():
                return known
        raise ValueError(
            f"backend {self.name!r} has no solver {name!r}; available: {', '.join(available)}"
        )

    @abstractmethod
    def solve(self, model: CompiledModel, settings: SolveSettings) -> Solution:
        """Solve `model`; never raises for solver trouble, reports it in the status instead."""

    def session(self, model: CompiledModel, settings: SolveSettings) -> Session:
        """A kept model for warm re-solves; backends with `Feature.SESSION` override this."""
        raise NotImplementedError(f"backend {self.name} keeps no sessions")

    def export(self, model: CompiledModel, path: str) -> None:
        """Write `model` as .lp or .mps (by suffix); backends with `Feature.EXPORT` override
        this. Raises OSError when the file cannot be written."""
        raise NotImplementedError(f"backend {self.name} cannot export models")
