"""An interior point for LPs of block shape (`Feature.BLOCKS`, `CompiledModel.shape`).

The share LPs of the fairness family (max-min, its Pareto stage, water filling's levels) are
made of one small block per job group (its share and time rows, its columns X_g·) joined by K
capacity rows and the level column: per iteration, the normal equations of a general interior
point cost a sparse factorization of (2 × jobs + K) rows; here they cost one pass over the
blocks and a dense (K + 1) × (K + 1) solve (`normal.py`). Every answer it calls optimal carries
a certificate computed on the model itself (`backends.certificate`): primal feasibility, duals
exact in sign, and a relative gap within `GAP`.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import ClassVar

import numpy as np

from apportion.solver.arraytypes import FloatArray
from apportion.solver.backends import work
from apportion.solver.backends.base import Backend, Feature, Solution, SolveSettings, reduced_costs
from apportion.solver.backends.blocks import ipm, prices, vertex
from apportion.solver.backends.blocks.form import (
    BlockForm,
    ShapeError,
    block_form,
    model_duals,
    model_point,
    scaled,
)
from apportion.solver.backends.blocks.part import of_form
from apportion.solver.backends.certificate import certify
from apportion.solver.backends.verify import settle
from apportion.solver.heap import heap_temporaries
from apportion.solver.model import CompiledModel
from apportion.solver.status import Status, Termination

#: The relative gap (and primal violation) an answer must be certified within to be optimal.
GAP = 1e-9
#: The interior point's own stopping tolerance: tighter than `GAP`, so that the certificate,
#: computed in the model's own units, passes when the loop says it converged.
TOLERANCE = 1e-10
#: `SolveSettings.solver` asking for the vertex methods before the interior point on every LP
#: of two rows per block: the early interior point's prices then the crossover (`vertex.py`).
#: Max-min's level LP takes the market's prices and the crossover by default (`prices.py`);
#: `solver="ipm"` asks for the interior point alone.
VERTEX = "vertex"
#: Where the interior point stops to hand its prices to the crossover (`vertex.py`).
CROSSOVER_TOLERANCE = 1e-5
#: Jobs whose cheapest type wins by less than this many temperatures of the market's
#: prices start free in the crossover.
MARKET_MARGIN = 10.0

TERMINATION: dict[ipm.Stop, Termination] = {
    ipm.Stop.CONVERGED: Termination.OPTIMAL,
    ipm.Stop.ITERATIONS: Termination.ITERATION_LIMIT,
    ipm.Stop.TIME: Termination.TIME_LIMIT,
    ipm.Stop.STALLED: Termination.NUMERICAL,
}


class BlocksBackend(Backend):
    name: ClassVar[str] = "blocks"
    features: ClassVar[frozenset[Feature]] = frozenset({Feature.BLOCKS, Feature.DUALS})

    def available_solvers(self) -> list[str]:
        return ["ipm"]

    def solve(self, model: CompiledModel, settings: SolveSettings) -> Solution:
        if model.is_mip or model.shape is None:
            raise ValueError("the block interior point solves continuous LPs of a block shape")
        started = time.perf_counter()
        try:
            raw = block_form(model, model.shape)
        except ShapeError as exc:
            return _refused(model, str(exc), time.perf_counter() - started)
        deadline = None if settings.time_limit is None else started + settings.time_limit
        exact = settings.solver == VERTEX and vertex.applicable(raw)
        # Max-min's level LP goes to the market and the crossover unless the interior point
        # is asked for by name; other LPs only when the vertex methods are.
        market = settings.solver in (None, VERTEX) and vertex.applicable(raw)
        from threadpoolctl import threadpool_limits

        # BLAS threads beyond the request's own only contend for the cores (measured on the
        # tall, thin products here: 30 ms with OpenBLAS's default threads, 0.6 ms on one).
        with (
            threadpool_limits(limits=settings.threads or 1, user_api="blas"),
            heap_temporaries(raw.size * 8),
        ):
            found = _from_market(model, raw, settings, deadline, started) if market else None
        if found is not None:
            return found
        form = scaled(raw)
        built = time.perf_counter()
        with (
            threadpool_limits(limits=settings.threads or 1, user_api="blas"),
            heap_temporaries(form.size * 8),
        ):
            found = _early(model, raw, form, settings, deadline) if exact else None
            if found is not None:
                return replace(found, build_seconds=built - started)
            out = ipm.solve(form, TOLERANCE, deadline)
        return _ipm_solution(self.name, model, form, out, built - started, built)


def _ipm_solution(
    backend: str,
    model: CompiledModel,
    form: BlockForm,
    out: ipm.IpmRun,
    build_seconds: float,
    built: float,
) -> Solution:
    """The interior point's answer in the model's terms, with its certificate."""
    x = model_point(form, model, out.point.x)
    duals = model_duals(form, model, out.point.y_loc, out.point.y_link)
    certificate = certify(model, x, duals)
    termination = TERMINATION[out.stop]
    if termination is Termination.OPTIMAL and not certificate.proves(GAP):
        termination = Termination.INACCURATE
    status, note = settle(termination, model, x)
    detail = (
        f"{out.stop.value} after {out.iterations} iterations; certificate: relative gap "
        f"{certificate.relative_gap:.1e}, primal violation {certificate.primal_violation:.1e}, "
        f"dual violation {certificate.dual_violation:.1e}"
    )
    return Solution(
        status=status,
        objective=certificate.objective if status.has_solution else None,
        x=x,
        backend=backend,
        solver="ipm",
        detail="; ".join(filter(None, [detail, note])),
        row_dual=duals if status.has_solution else None,
        col_dual=reduced_costs(model, duals) if status.has_solution else None,
        iterations=out.iterations,
        # Its own iteration cap bounds it under a work limit (no deadline then).
        work=out.iterations * work.IPM_ITERATION,
        build_seconds=build_seconds,
        solve_seconds=time.perf_counter() - built,
        extra={
            "relative_gap": certificate.relative_gap,
            "dual_bound": certificate.bound,
            "primal_violation": certificate.primal_violation,
            "dual_violation": certificate.dual_violation,
        },
        termination=termination,
    )


def _early(
    model: CompiledModel,
    raw: BlockForm,
    form: BlockForm,
    settings: SolveSettings,
    deadline: float | None,
) -> Solution | None:
    """The crossover from the interior point's prices and level at `CROSSOVER_TOLERANCE`."""
    built = time.perf_counter()
    early = ipm.solve(form, CROSSOVER_TOLERANCE, deadline)
    if early.stop is not ipm.Stop.CONVERGED:
        return None
    prices = early.point.y_link * form.scale_link / form.scale_cost
    level = form.parts(early.point.x)[1]
    found = _vertex(model, raw, (prices, level), settings, deadline, built)
    if found is None:
        return None
    return replace(
        found,
        iterations=early.iterations + found.iterations,
        detail=f"{early.iterations} interior-point iterations to {CROSSOVER_TOLERANCE:g}, "
        f"then {found.detail}",
    )


def _from_market(
    model: CompiledModel,
    raw: BlockForm,
    settings: SolveSettings,
    deadline: float | None,
    started: float,
) -> Solution | None:
    """Max-min's level LP without the interior point: the market's prices (`prices.py`),
    then the crossover; None when either does not apply or does not end certified."""
    part = of_form(raw)
    if not prices.applicable(part):
        return None
    built = time.perf_counter()
    found = prices.market_prices(part)
    if found is None:
        return None
    y_link, level, tau = found
    # The prices are right to about τ: jobs torn by less than a few τ start free.
    margin = max(vertex.MARGIN, MARKET_MARGIN * tau)
    solution = _vertex(model, raw, (y_link, level), settings, deadline, built, margin, True)
    if solution is None:
        return None
    return replace(
        solution,
        build_seconds=built - started,
        detail=f"capacity prices of the market, then {solution.detail}",
    )


def _vertex(
    model: CompiledModel,
    form: BlockForm,
    start: tuple[FloatArray, FloatArray],
    settings: SolveSettings,
    deadline: float | None,
    built: float,
    margin: float = vertex.MARGIN,
    market: bool = False,
) -> Solution | None:
    """The optimal vertex found from the linking prices and level `start` (`vertex.py`; the
    `market`'s for max-min's level LP), when its certificate proves it optimal within `GAP`;
    None otherwise."""
    found = vertex.crossover(form, *start, settings.threads, deadline, margin, market)
    if found is None:
        return None
    x = model_point(form, model, found.x)
    duals = model_duals(form, model, found.y_loc, found.y_link)
    certificate = certify(model, x, duals)
    if not certificate.proves(GAP):
        return None
    return Solution(
        status=Status.OPTIMAL,
        objective=certificate.objective,
        x=x,
        backend=BlocksBackend.name,
        solver="vertex",
        detail=(
            f"optimal vertex after {found.rounds} master rounds ({found.freed} blocks free); "
            f"certificate: relative gap {certificate.relative_gap:.1e}, primal violation "
            f"{certificate.primal_violation:.1e}, dual violation "
            f"{certificate.dual_violation:.1e}"
        ),
        row_dual=duals,
        col_dual=reduced_costs(model, duals),
        iterations=found.rounds,
        solve_seconds=time.perf_counter() - built,
        extra={
            "relative_gap": certificate.relative_gap,
            "dual_bound": certificate.bound,
            "primal_violation": certificate.primal_violation,
            "dual_violation": certificate.dual_violation,
        },
        termination=Termination.OPTIMAL,
    )


def _refused(model: CompiledModel, why: str, seconds: float) -> Solution:
    return Solution(
        Status.ERROR,
        None,
        np.zeros(model.num_cols),
        backend=BlocksBackend.name,
        solver="ipm",
        detail=f"not of its declared block shape: {why}",
        build_seconds=seconds,
        termination=Termination.SOLVER_ERROR,
    )
