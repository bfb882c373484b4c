"""Contention-penalized placement ILP (FORMULATIONS §7): the exact counterpart of DeepShare's
learned policy.

By default (`objective = "schedule"`, `schedule/`) it is a scheduler: who runs until the next
call, where, and whether a running job stays, stops or moves, by SRTF's or LAS's priority levels
traded against the throughput contention takes and the cost of a restart (its MILP in
`schedule.model`). The two objectives below (`linear`, `reference`) decide which waiting jobs
start now, in which shape, on which nodes.

Data: nodes n with G_n GPUs, F_n of them free (running jobs never move); running jobs with their
placements; candidates a with demand g_a and allowed shapes (k nodes × p GPUs); CS(α | β) for job
configurations α = (class, total GPUs, nodes spanned). With C = Σ_n G_n GPUs and M jobs in the
snapshot (running and waiting):

    maximize   W2 · U − W1 · Φ
    U = (Σ_running g_r + Σ_o g_o v_o) / C                       (GPU utilization)
    Φ = (Σ_running+candidates c_j) / M                          (mean contention sensitivity;
                                                                 a waiting job counts c = 1)
subject to the placement rows of `model` (shapes, capacity, one start per job) and
either penalty:

- worst (default, DeepShare's simulator): c_j = max(1, max over co-runners CS(α_j | α_b)),
  linearized per (configuration, node) in `worst`;
- additive: c_j = 1 + Σ over co-runners (CS(α_j | α_b) − 1), linearized per job pair in
  `additive` (heavier: quadratic in candidates).

Co-runners are the other jobs holding GPUs on a node the job uses. The mean runs over every job
of the snapshot rather than over running ones only: a mean over the started jobs would reward
starting an uncontended job just to dilute it, and is not linear. DeepShare's own metric (mean
over running and started jobs) is reported as `mean_contention_sensitivity`, and DeepShare's own
reward, W2·U − W1·mean over running and started jobs of 1 − 1/c_j, is the objective with
`objective = "reference"` (worst penalty only), linearized exactly in `reference`.

Solving (`search`): a greedy placement (or an estimate's, `start`) is the starting incumbent;
candidate-pair rows of the worst penalty are added lazily; under DeepShare's scope a pooled
relaxation without per-candidate copies (`pooled`) is solved first and settles the answer when
its bound proves the best placement found; the reported numbers are recomputed from the
placement (`evaluate`), not read from the solver. Under a time limit the best placement found
is returned with its gap (status `feasible`), or the greedy one (status `fallback`) if the
solver had none of its own.
"""

from __future__ import annotations

from typing import Any

from apportion.formulations.placement.answer import PlacementAnswer
from apportion.formulations.placement.evaluate import Evaluation, evaluate
from apportion.formulations.placement.evidence import decision_evidence
from apportion.formulations.placement.instance import Instance, Started, build_instance
from apportion.formulations.placement.options import ContentionPlacementOptions
from apportion.formulations.placement.reference import priced
from apportion.formulations.placement.report import outcome_from, unproven
from apportion.formulations.placement.search import solve as solve_placement
from apportion.solver.arrays import ClusterArrays
from apportion.solver.backends import Feature
from apportion.solver.context import SolveContext
from apportion.solver.errors import InputError
from apportion.solver.policy import Outcome, Policy
from apportion.solver.snapshot import Snapshot
from apportion.solver.status import Status


def run(
    snapshot: Snapshot,
    problem: ClusterArrays,
    options: ContentionPlacementOptions,
    ctx: SolveContext,
) -> Outcome:
    if snapshot.nodes is None:
        raise InputError.single(("nodes",), "contention_placement places jobs on nodes: give them")
    if options.objective != "linear" and options.penalty != "worst":
        # 1 − 1/(1 + Σ (CS − 1)) is concave in the co-runners: no exact linear form.
        raise InputError.single(
            ("options", "objective"), f"the {options.objective} objective needs penalty 'worst'"
        )
    if options.objective == "schedule":
        from apportion.formulations.placement.schedule import run_schedule

        return run_schedule(snapshot, problem, options, ctx)
    inst = build_instance(
        snapshot, options.shapes, options.allow_single_node, options.contention_scope
    )
    if options.objective == "reference":
        inst = priced(inst)
    outcome, started, evaluation = _placed(inst, problem, options, ctx)
    if ctx.options.explain and evaluation is not None:
        evidence = decision_evidence(inst, options, outcome.status, evaluation, started)
        outcome = outcome.but(evidence=evidence)
    return outcome


def _placed(
    inst: Instance,
    problem: ClusterArrays,
    options: ContentionPlacementOptions,
    ctx: SolveContext,
) -> tuple[Outcome, Started, Evaluation | None]:
    """The best placement found and its evaluation (None when there is no placement to
    answer with), with the outcome they make."""
    if not inst.options.size:  # nothing can start: no model to solve
        evaluation = evaluate(inst, {}, options.w1, options.penalty)
        outcome = outcome_from(inst, problem, options, evaluation, Status.OPTIMAL, None)
        return outcome, {}, evaluation
    answer = solve_placement(inst, options, ctx)
    if not answer.status.has_solution or answer.problems:
        # Never hand a scheduler a placement that breaks the rules, whatever the solver said.
        outcome = outcome_from(
            inst, problem, options, None, answer.status, None, warnings=answer.problems
        )
        return outcome.but(mip_gap=answer.gap, **_verdict(answer)), {}, None
    evaluation = evaluate(inst, answer.started, options.w1, options.penalty)
    outcome = outcome_from(
        inst,
        problem,
        options,
        evaluation,
        answer.status,
        answer.solver_objective,
        answer.started,
    )
    # The gap of the answer, across lazy rounds.
    outcome = outcome.but(mip_gap=answer.gap, **_verdict(answer))
    return outcome.warned(*unproven(answer.status, answer.gap)), answer.started, evaluation


def _verdict(answer: PlacementAnswer) -> dict[str, Any]:
    """The search's own account of why it stopped, for the outcome."""
    return {"solution": answer.solution, "termination": answer.termination}


POLICY = Policy(
    name="contention_placement",
    summary="Decide who runs where on nodes, by SRTF's or LAS's priority traded against network "
    "contention (or start waiting jobs by DeepShare's reward, exact).",
    options=ContentionPlacementOptions,
    run=run,
    problem_class="MILP",
    needs=frozenset({Feature.MILP}),
)
