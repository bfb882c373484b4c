"""Why each elastic job runs where it runs, or waits (docs/EXPLANATIONS.md), and what one more
GPU of each type would be worth.

Prices are exact: the same model solved again with one more GPU of the type; a price is the
gain of the policy's objective (its decrease, for a minimized one). A waiting job is
`capacity` when none of its configurations fits the GPUs the answer leaves idle, `lower_value`
when one fits but running it would make the objective worse (a restart discount, ONES's
GPU-seconds); with the budget left, `objective_if_run` is the best objective with it running
(one more member of its class forced to run), so `loss` is what running it would cost.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from apportion.formulations.elastic.candidates import NO_GOODPUT, NOT_ELASTIC, ElasticJobs
from apportion.formulations.elastic.integral import prepare, solve_again
from apportion.formulations.elastic.model import Presolve
from apportion.solver.arrays import ClusterArrays
from apportion.solver.arraytypes import BoolArray, FloatArray, IntArray
from apportion.solver.context import SolveContext
from apportion.solver.explain.codes import Reason
from apportion.solver.policy import DecisionEvidence

Metric = float | int | str | bool | None

NOTE = (
    "prices: the objective's gain with one more GPU of the type (the model solved again); "
    "a waiting job's objective_if_run: the best objective with it running"
)


def integral_evidence(
    ctx: SolveContext,
    problem: ClusterArrays,
    jobs: ElasticJobs,
    pick: IntArray,
    value: FloatArray,
    keep: BoolArray,
    to_objective: Callable[[float], float] | None,
    presolve: Presolve = "auto",
) -> DecisionEvidence:
    """Codes per job; prices and losses when `to_objective` maps the model's Σ value to the
    policy's objective (None: codes only)."""
    c = jobs.candidates
    runs = pick >= 0
    used = np.bincount(c.gpu[pick[runs]], weights=c.gpus[pick[runs]], minlength=problem.num_types)
    idle = problem.gpu_count - used
    codes: dict[int, str] = {}
    texts: dict[int, str] = {}
    rows: dict[int, list[str]] = {}
    detail: dict[int, dict[str, Metric]] = {}
    names = problem.gpu_names
    for j in range(problem.num_jobs):
        if runs[j]:
            at = int(pick[j])
            codes[j], texts[j] = Reason.GRANTED, f"runs on {c.gpus[at]} × {names[c.gpu[at]]}"
            detail[j] = {"configuration": int(c.label[at]), "goodput": float(c.goodput[at])}
        elif j in jobs.reasons:
            codes[j], texts[j] = _data_code(jobs.reasons[j]), jobs.reasons[j]
        else:
            lo, hi = int(c.start[j]), int(c.start[j + 1])
            fits = c.gpus[lo:hi] <= idle[c.gpu[lo:hi]]
            types = sorted({names[k] for k in c.gpu[lo:hi].tolist()})
            rows[j] = [f"capacity[{k}]" for k in types]
            if fits.any():
                codes[j] = Reason.LOWER_VALUE
                texts[j] = "a configuration fits the idle GPUs, but running it lowers the objective"
            else:
                codes[j] = Reason.CAPACITY
                texts[j] = "no configuration fits the GPUs the other jobs leave idle"
    prices = None
    if to_objective is not None:
        prices, loss = _prices_and_losses(
            ctx, problem, jobs, pick, value, keep, to_objective, presolve
        )
        for j, numbers in loss.items():
            detail.setdefault(j, {}).update(numbers)
    return DecisionEvidence(
        codes, texts, rows, detail, note=NOTE, prices=prices, price_stage="one more GPU"
    )


def _data_code(reason: str) -> str:
    if reason in (NO_GOODPUT, NOT_ELASTIC):
        return Reason.NO_THROUGHPUT
    return Reason.GANG_DOES_NOT_FIT


def _prices_and_losses(
    ctx: SolveContext,
    problem: ClusterArrays,
    jobs: ElasticJobs,
    pick: IntArray,
    value: FloatArray,
    keep: BoolArray,
    to_objective: Callable[[float], float],
    presolve: Presolve,
) -> tuple[FloatArray, dict[int, dict[str, Metric]]]:
    runs = pick >= 0
    base = float(value[pick[runs]].sum())
    now = to_objective(base)
    prices = np.full(problem.num_types, np.nan)
    for k in range(problem.num_types):
        more = solve_again(ctx, problem, jobs, value, keep, extra_gpu=k, presolve=presolve)
        if more is not None:
            prices[k] = abs(to_objective(more) - now)
    loss: dict[int, dict[str, Metric]] = {}
    # forced to run, a job may take a candidate the policy leaves out as never worth it
    every = np.ones(value.size, dtype=bool)
    merged = ctx.options.merge_identical
    choice, _, _ = prepare("explain", problem, jobs, value, every, merged, presolve)
    for members in choice.classes.members:
        waiting = members[~runs[members]]
        if not waiting.size:
            continue
        # identical jobs wait for the same reason: one solve per class
        least = int(runs[members].sum()) + 1
        force = (int(waiting[0]), least)
        forced = solve_again(ctx, problem, jobs, value, every, force=force, presolve=presolve)
        numbers: dict[str, Metric] = {"objective_if_run": None}
        if forced is not None:
            numbers = {
                "objective_if_run": to_objective(forced),
                "loss": abs(to_objective(forced) - now),
            }
        for j in waiting.tolist():
            loss[j] = numbers
    return prices, loss
