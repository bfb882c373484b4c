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
from apportion.solver.backends.base import Backend, Feature, Solution, SolveSettings, reduced_costs
from apportion.solver.backends.blocks import ipm, vertex
from apportion.solver.backends.blocks.form import (
    BlockForm,
    ShapeError,
    block_form,
    model_duals,
    model_point,
    scaled,
)
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
#: Where the interior point stops to hand its prices to the crossover (`vertex.py`).
CROSSOVER_TOLERANCE = 1e-5

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
        if model.is_mip:
            raise ValueError("the block interior point solves continuous models only")
        if model.shape is None:
            raise ValueError("the block interior point needs a model with a declared block shape")
        started = time.perf_counter()
        try:
            raw = block_form(model, model.shape)
        except ShapeError as exc:
            return _refused(model, str(exc), time.perf_counter() - started)
        deadline = None if settings.time_limit is None else started + settings.time_limit
        form = scaled(raw)
        built = time.perf_counter()
        from threadpoolctl import threadpool_limits

        # BLAS threads beyond the request's own only contend for the cores (measured on the
        # tall, thin products here: 30 ms with OpenBLAS's default threads, 0.6 ms on one).
        with (
            threadpool_limits(limits=settings.threads or 1, user_api="blas"),
            heap_temporaries(form.size * 8),
        ):
            if vertex.applicable(raw):
                early = ipm.solve(form, CROSSOVER_TOLERANCE, deadline)
                if early.stop is ipm.Stop.CONVERGED:
                    prices = early.point.y_link * form.scale_link / form.scale_cost
                    level = form.parts(early.point.x)[1]
                    found = _vertex(model, raw, (prices, level), settings, deadline, built)
                    if found is not None:
                        rounds = found.iterations
                        return replace(
                            found,
                            iterations=early.iterations + rounds,
                            build_seconds=built - started,
                            detail=f"{early.iterations} interior-point iterations to "
                            f"{CROSSOVER_TOLERANCE:g}, then {found.detail}",
                        )
            out = ipm.solve(form, TOLERANCE, deadline)
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
            backend=self.name,
            solver="ipm",
            detail="; ".join(filter(None, [detail, note])),
            row_dual=duals if status.has_solution else None,
            col_dual=reduced_costs(model, duals) if status.has_solution else None,
            iterations=out.iterations,
            build_seconds=built - started,
            solve_seconds=time.perf_counter() - built,
            extra={
                "relative_gap": certificate.relative_gap,
                "dual_bound": certificate.bound,
                "primal_violation": certificate.primal_violation,
                "dual_violation": certificate.dual_violation,
            },
            termination=termination,
        )


def _vertex(
    model: CompiledModel,
    form: BlockForm,
    start: tuple[FloatArray, FloatArray],
    settings: SolveSettings,
    deadline: float | None,
    built: float,
) -> Solution | None:
    """The optimal vertex found from the linking prices and level `start` (`vertex.py`),
    when its certificate proves it optimal within `GAP`; None otherwise."""
    found = vertex.crossover(form, *start, settings.threads, deadline)
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
