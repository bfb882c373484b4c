"""What stops HiGHS besides its own limits: a caller watching a MILP's incumbents and bound,
and a counted-work limit (`backends.work`), iteration and node limits and a MILP stopped by a
count of its own progress checks, never by the clock.

HiGHS's MILP solver takes no limit on its LP iterations (`simplex_iteration_limit` binds LPs
only) and its callbacks do not report them; a MILP's root (cuts, heuristics) can take long
without a node. So a MILP's work, as it goes, is its nodes and its interrupt checks, which
HiGHS makes at fixed points of its search (in the root as in the tree): counts, the same on any
machine under any load. The solve's charge afterwards adds its LP iterations, which HiGHS
reports once it stops.
"""

from __future__ import annotations

import highspy
import numpy as np

from apportion.solver.backends import work
from apportion.solver.backends.base import OnBound, OnIncumbent
from apportion.solver.model import CompiledModel
from apportion.solver.status import Termination


class WorkMeter:
    """Stops a MILP once its nodes and checks have cost `units`; `hit` says it did."""

    def __init__(self, units: float) -> None:
        self.units, self.checks, self.hit = units, 0, False

    def check(self, event: highspy.highs.HighsCallbackEvent) -> None:
        self.checks += 1
        nodes = max(int(event.data_out.mip_node_count), 0)
        if self.checks * work.MIP_CHECK + nodes * work.MIP_NODE >= self.units:
            self.hit = True
            event.interrupt()

    def termination(self, reported: Termination) -> Termination:
        """A stop this meter asked for is the work limit's, not an interrupt."""
        return Termination.ITERATION_LIMIT if self.hit else reported


def limit_work(h: highspy.Highs, model: CompiledModel, units: float) -> WorkMeter | None:
    """Iteration and node limits worth `units` of work, and no time limit; for a MILP, the
    meter that stops it (None for an LP)."""
    for name, cost in (
        ("simplex_iteration_limit", work.SIMPLEX_ITERATION),
        ("ipm_iteration_limit", work.IPM_ITERATION),
        ("pdlp_iteration_limit", work.PDLP_ITERATION),
    ):
        h.setOptionValue(name, work.steps(units, cost))
    if not model.is_mip:
        return None
    h.setOptionValue("mip_max_nodes", work.steps(units, work.MIP_NODE))
    meter = WorkMeter(units)
    h.cbMipInterrupt.subscribe(meter.check)
    return meter


def work_of(info: highspy.HighsInfo, is_mip: bool, meter: WorkMeter | None = None) -> float:
    """What a finished solve cost, in work units."""
    nodes = max(int(info.mip_node_count), 0) if is_mip else 0
    checks = meter.checks if meter is not None else 0
    return (
        max(int(info.simplex_iteration_count), 0) * work.SIMPLEX_ITERATION
        + max(int(info.ipm_iteration_count), 0) * work.IPM_ITERATION
        + max(int(info.pdlp_iteration_count), 0) * work.PDLP_ITERATION
        + nodes * work.MIP_NODE
        + checks * work.MIP_CHECK
    )


def watch(
    h: highspy.Highs, num_cols: int, on_incumbent: OnIncumbent | None, on_bound: OnBound | None
) -> None:
    """Hand each improving solution to `on_incumbent` and the dual bound at each interrupt
    check to `on_bound`; stop at the next check once either asks to (HiGHS takes a stop request
    only from its interrupt callback)."""
    stop = False

    def improving(event: highspy.highs.HighsCallbackEvent) -> None:
        nonlocal stop
        x = np.asarray(event.data_out.mip_solution, dtype=float)
        if on_incumbent is not None and x.size == num_cols:
            stop = on_incumbent(x, float(event.data_out.mip_dual_bound)) or stop

    def interrupt(event: highspy.highs.HighsCallbackEvent) -> None:
        nonlocal stop
        bound = float(event.data_out.mip_dual_bound)
        # Before the first LP the bound is infinite: nothing to test yet.
        if not stop and on_bound is not None and np.isfinite(bound):
            stop = on_bound(bound)
        if stop:
            event.interrupt()

    if on_incumbent is not None:
        h.cbMipImprovingSolution.subscribe(improving)
    h.cbMipInterrupt.subscribe(interrupt)
