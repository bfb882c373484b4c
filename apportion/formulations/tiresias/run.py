"""What both Tiresias policies do once each job has a priority: queues and promotion, the
serving order, admission (exact or greedy), placement, and the outcome."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from apportion.formulations.tiresias.greedy import Decision, greedy
from apportion.formulations.tiresias.instance import Instance, build_instance
from apportion.formulations.tiresias.levels import Solved, admit
from apportion.formulations.tiresias.netplace import place_in_turn, regroup, with_network
from apportion.formulations.tiresias.options import TiresiasOptions
from apportion.formulations.tiresias.queues import (
    Queues,
    promote,
    queue_of,
    ranks,
    revisit_after,
    serving_order,
)
from apportion.formulations.tiresias.report import Report, outcome_from
from apportion.solver.arrays import ClusterArrays
from apportion.solver.arraytypes import BoolArray, FloatArray, IntArray
from apportion.solver.context import SolveContext
from apportion.solver.policy import Outcome
from apportion.solver.snapshot import Snapshot
from apportion.solver.status import Status, Termination

#: (attained service, queue) → (the priority that orders a queue, the priority reported).
Priority = Callable[[FloatArray, IntArray], tuple[FloatArray, FloatArray]]


def run_tiresias(
    snapshot: Snapshot,
    problem: ClusterArrays,
    options: TiresiasOptions,
    ctx: SolveContext,
    priority: Priority,
) -> Outcome:
    inst = build_instance(snapshot, options.pack_limit, options.preemption_cost)
    jobs = snapshot.jobs
    attained = _column([job.attained_service for job in jobs], 0.0)
    pending = _column([job.pending_seconds for job in jobs], 0.0)
    limits = np.asarray(options.thresholds, dtype=float)
    gang = inst.gang.astype(float)
    queue = queue_of(attained, limits)
    promoted = promote(queue, attained, pending, gang, ~inst.running, options.promote_knob)
    queue[promoted] = 0
    attained = np.where(promoted, 0.0, attained)
    pending = np.where(promoted, 0.0, pending)
    orders, reported = priority(attained, queue)
    order = _serving(snapshot, inst, queue, orders, promoted)
    queues = Queues(queue, promoted, attained, ranks(queue, order), reported)
    start = greedy(inst, order, options.max_preemptions)
    if options.admission == "exact":
        solved = admit(inst, queues, start, options.max_preemptions, ctx)
    else:
        solved = _greedy(inst, start)
    decision = solved.decision
    network = None
    if options.placement == "network_load":
        spread = [j for j in order.tolist() if j in decision.started and not inst.sensitive[j]]
        spread = [j for j in spread if inst.gang[j] >= 2]
        decision, kind = regroup(decision, spread)
        network = place_in_turn(inst, decision, spread, ctx, kind)
    revisit = revisit_after(queues, decision.runs, gang, pending, limits, options.promote_knob)
    report = Report(
        solved.status,
        solved.levels,
        revisit,
        list(options.thresholds),
        exact=options.admission == "exact",
        gap=solved.gap,
    )
    outcome = outcome_from(inst, problem, queues, decision, report)
    if solved.solution is not None:
        outcome = outcome.but(solution=solved.solution)
    if options.admission == "greedy" and solved.status is not Status.OPTIMAL:
        outcome = outcome.but(termination=Termination.NOT_SOLVED, detail=GREEDY).warned(GREEDY)
    searched = [solved.status] if options.admission == "exact" else []
    if network is not None:
        outcome = with_network(outcome, network)
        searched.append(network.status)
    if any(s is not Status.OPTIMAL for s in searched) and ctx.budget.spent():
        # A search fell short of its proof and the clock is out: it was the clock.
        outcome = outcome.but(termination=ctx.budget.termination)
    return outcome


#: What a greedy answer is, in its detail and warnings.
GREEDY = (
    "admission=greedy: Tiresias's greedy rule (a heuristic), not proven to run the most jobs "
    "of each queue"
)


def _greedy(inst: Instance, start: Decision) -> Solved:
    """Tiresias's own admission as the answer: optimal only when every job that can run runs
    (then no decision does better on any level), else a heuristic's feasible answer."""
    every = bool(start.runs[inst.schedulable].all())
    return Solved(start, Status.OPTIMAL if every else Status.FEASIBLE, levels=["greedy"])


def _serving(
    snapshot: Snapshot, inst: Instance, queue: IntArray, orders: FloatArray, promoted: BoolArray
) -> IntArray:
    """The serving order; a job promoted by this answer joins the top queue's back."""
    jobs = snapshot.jobs
    return serving_order(
        queue,
        orders,
        _column([job.started_at for job in jobs], np.nan),
        _column([job.arrival_time for job in jobs], np.nan),
        inst.running,
        np.where(promoted, np.nan, _column([job.queue_order for job in jobs], np.nan)),
    )


def _column(values: list[float | None], missing: float) -> FloatArray:
    return np.array([missing if v is None else v for v in values], dtype=float)
