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
from typing import ClassVar

import numpy as np

from apportion.solver.backends import work
from apportion.solver.backends.base import Backend, Feature, Solution, SolveSettings, reduced_costs
from apportion.solver.backends.blocks import ipm
from apportion.solver.backends.blocks.form import (
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
            form = scaled(block_form(model, model.shape))
        except ShapeError as exc:
            return _refused(model, str(exc), time.perf_counter() - started)
        built = time.perf_counter()
        deadline = None if settings.time_limit is None else started + settings.time_limit
        from threadpoolctl import threadpool_limits

        # BLAS threads beyond the request's own only contend for the cores (measured on the
        # tall, thin products here: 30 ms with OpenBLAS's default threads, 0.6 ms on one).
        with (
            threadpool_limits(limits=settings.threads or 1, user_api="blas"),
            heap_temporaries(form.size * 8),
        ):
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
            # Its own iteration cap bounds it under a work limit (no deadline then).
            work=out.iterations * work.IPM_ITERATION,
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
