"""Maximum total goodput over configurations (FORMULATIONS §9d).

With Ĝ_jc the goodput of job j in configuration c over its smallest (discounted by the
re-allocation factor where c restarts it, `candidates`) and binary x_jc:

    maximize    Σ_jc w_j Ĝ_jc x_jc
    subject to  Σ_c x_jc ≤ 1 ∀j,   Σ_{j, c on k} g_c x_jc ≤ N_k ∀k     (`model`)

Solved over classes of identical jobs with integer counts (exact, `classes`).
"""

from __future__ import annotations

import numpy as np

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

NAME = "elastic_max_goodput"


def run(
    snapshot: Snapshot, problem: ClusterArrays, options: ElasticOptions, ctx: SolveContext
) -> Outcome:
    jobs = collect(snapshot, problem, options.restart_factor)
    c = jobs.candidates
    value = jobs.weight[c.job] * c.normalized
    pinned = float(value[jobs.pinned[c.job]].sum())  # in the total, outside the model
    answer = solve_integral(
        NAME, ctx, problem, jobs, value, value > 0, options.presolve, Reading(pinned)
    )
    runs = answer.pick >= 0
    total = float(value[answer.pick[runs]].sum()) if answer.status.has_solution else None
    outcome = integral_outcome(
        problem, jobs, answer.pick, answer.status, total, "total normalized goodput Σ w_j Ĝ_j"
    )
    outcome = outcome.warned(*answer.warnings).but(
        solution=answer.solution,
        merged_groups=answer.classes if ctx.options.merge_identical else None,
    )
    outcome = outcome.summarized(total_goodput=float(np.sum(c.goodput[answer.pick[runs]])))
    if ctx.options.explain and answer.status.has_solution:
        evidence = integral_evidence(
            ctx, problem, jobs, answer.pick, value, value > 0, lambda v: v, options.presolve
        )
        outcome = outcome.but(evidence=evidence)
    return outcome


POLICY = Policy(
    name=NAME,
    summary="Give each elastic job one configuration (GPU type, GPUs, batch size) maximizing "
    "the total normalized goodput.",
    options=ElasticOptions,
    run=run,
    problem_class="MILP",
    needs=frozenset({Feature.MILP}),
    defaults=PolicyDefaults(mip_gap=1e-4),
)
