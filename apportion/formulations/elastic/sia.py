"""Sia's policy (SOSP'23), exact (FORMULATIONS §9e): one configuration per job maximizing the
power mean of normalized goodput, with a price for leaving a job without GPUs.

With Ĝ_jc the goodput of job j in configuration c over its smallest, discounted by Sia's
re-allocation factor where c restarts j (`candidates`), A_jc = Ĝ_jc^p and binary x_jc:

    p < 0:  minimize  Σ_jc w_j A_jc x_jc + λ Σ_j w_j (1 − Σ_c x_jc)
    p > 0:  maximize  Σ_jc w_j A_jc x_jc − λ Σ_j w_j (1 − Σ_c x_jc)
    subject to  Σ_c x_jc ≤ 1 ∀j,  Σ_{j, c on k} g_c x_jc ≤ N_k ∀k,  pinned jobs keep theirs,

over the jobs with a configuration that fits the cluster (the others cannot run: no decision).

For p < 0, minimizing Σ A over the jobs that run maximizes their power mean (1/J Σ Ĝ^p)^(1/p);
λ > 1 (default 1.1) makes running any job in any configuration better than leaving it waiting
(A ≤ 1 for Ĝ ≥ 1). Sia's defaults: p = −0.5, λ = 1.1, a 0.01 % gap. Sia's policy rounds every
A to two decimals before it solves, which ties configurations that differ; `round_decimals`
does the same (2: Sia's rule, what the elastic simulator uses), by default A is used as computed.
Beyond Sia: identical jobs are solved as classes, and a candidate that cannot lower the
objective (A ≥ λ for p < 0) is left out of the model, which changes no optimum.
"""

from __future__ import annotations

import numpy as np
from pydantic import Field, field_validator

from apportion.formulations.elastic.candidates import collect
from apportion.formulations.elastic.core import Reading
from apportion.formulations.elastic.evidence import integral_evidence
from apportion.formulations.elastic.integral import solve_integral
from apportion.formulations.elastic.options import ElasticOptions
from apportion.formulations.elastic.outcome import integral_outcome
from apportion.solver.arrays import ClusterArrays
from apportion.solver.backends import Feature
from apportion.solver.context import SolveContext
from apportion.solver.policy import Outcome, Policy, PolicyDefaults
from apportion.solver.snapshot import Snapshot

NAME = "sia"


class SiaOptions(ElasticOptions):
    p: float = Field(
        -0.5,
        ge=-10.0,
        le=10.0,
        description="Power of the mean of normalized goodputs (not 0): below 0 favours the "
        "worst-served jobs (−1: harmonic mean), 1 is the total.",
    )
    lambda_n: float = Field(
        1.1,
        ge=0.0,
        le=1e6,
        description="Price of a job left without GPUs, in units of A = Ĝ^p (Sia's λ_n).",
    )
    round_decimals: int | None = Field(
        None,
        ge=0,
        le=12,
        description="Round each A = Ĝ^p to this many decimals before solving, as Sia's policy "
        "does (2); the objective is then of the rounded values. None: A as computed.",
    )

    @field_validator("p")
    @classmethod
    def _not_zero(cls, p: float) -> float:
        if p == 0:
            raise ValueError("p = 0 is not a power mean Sia defines; use a small |p|")
        return p


def run(
    snapshot: Snapshot, problem: ClusterArrays, options: SiaOptions, ctx: SolveContext
) -> Outcome:
    jobs = collect(snapshot, problem, options.restart_factor)
    c = jobs.candidates
    with np.errstate(divide="ignore"):  # a configuration worth nothing: A = ∞, never chosen
        exact = np.where(c.normalized > 0, c.normalized, 0.0) ** options.p
    power = exact if options.round_decimals is None else np.round(exact, options.round_decimals)
    weight = jobs.weight[c.job]
    lam = options.lambda_n
    # value of running a job in c rather than leaving it waiting, to maximize
    value = weight * (lam - power) if options.p < 0 else weight * (power + lam)
    sign = 1.0 if options.p < 0 else -1.0
    # the objective the user reads: pinned jobs' A and λ for every other job, less (p < 0) or
    # plus Σ value over the running ones; its gap is the one to hold and report
    held = jobs.pinned[c.job]
    free = jobs.has_candidates() & ~jobs.pinned
    offset = float(np.sum(weight[held] * power[held])) + sign * lam * float(jobs.weight[free].sum())
    reading = Reading(offset, minimize=options.p < 0)
    answer = solve_integral(NAME, ctx, problem, jobs, value, value > 0, options.presolve, reading)
    runs = answer.pick >= 0
    waiting = jobs.has_candidates() & ~runs
    chosen = answer.pick[runs]
    objective = None
    if answer.status.has_solution:
        objective = float(
            np.sum(weight[chosen] * power[chosen]) + sign * lam * np.sum(jobs.weight[waiting])
        )
    name = "Σ w_j Ĝ_j^p over running jobs " + (
        "+ λ Σ w_j over waiting ones (minimized)"
        if options.p < 0
        else "− λ Σ w_j over waiting ones (maximized)"
    )
    outcome = integral_outcome(problem, jobs, answer.pick, answer.status, objective, name)
    outcome = outcome.warned(*answer.warnings).but(
        solution=answer.solution,
        merged_groups=answer.classes if ctx.options.merge_identical else None,
    )
    if chosen.size:
        # of the goodputs as they are: a rounded A of 0 has no power mean
        mean = np.sum(weight[chosen] * exact[chosen]) / np.sum(weight[chosen])
        outcome = outcome.summarized(power_mean=float(mean ** (1.0 / options.p)))
    if ctx.options.explain and answer.status.has_solution:
        total = lam * float(np.sum(jobs.weight[jobs.has_candidates()]))
        evidence = integral_evidence(
            ctx, problem, jobs, answer.pick, value, value > 0,
            (lambda v: total - v) if options.p < 0 else (lambda v: v - total),
            options.presolve,
        )  # fmt: skip
        outcome = outcome.but(evidence=evidence)
    return outcome


POLICY = Policy(
    name=NAME,
    summary="Sia: one configuration (GPU type, GPUs, batch size) per elastic job maximizing the "
    "power mean of normalized goodput, with a restart discount and a price for waiting.",
    options=SiaOptions,
    run=run,
    problem_class="MILP",
    needs=frozenset({Feature.MILP}),
    defaults=PolicyDefaults(mip_gap=1e-4),
)
