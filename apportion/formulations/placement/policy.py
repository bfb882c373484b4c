"""Contention-penalized placement ILP (FORMULATIONS §7): the exact counterpart of DeepShare's
learned policy. Decide which waiting jobs start now, in which shape, on which nodes.

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
    if options.objective == "reference" and options.penalty != "worst":
        # 1 − 1/(1 + Σ (CS − 1)) is concave in the co-runners: no exact linear form.
        raise InputError.single(
            ("options", "objective"), "the reference objective needs penalty 'worst'"
        )
    inst = build_instance(
        snapshot, options.shapes, options.allow_single_node, options.contention_scope
    )
    if options.objective == "reference":
        inst = priced(inst)
    outcome, started, evaluation = _placed(inst, problem, options, ctx)
    if ctx.options.explain and evaluation is not None:
        outcome.evidence = decision_evidence(inst, options, outcome.status, evaluation, started)
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
        outcome.mip_gap = answer.gap
        return outcome, {}, None
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
    outcome.mip_gap = answer.gap  # the gap of the answer, across lazy rounds
    outcome.warnings.extend(unproven(answer.status, answer.gap))
    return outcome, answer.started, evaluation


POLICY = Policy(
    name="contention_placement",
    summary="Start waiting jobs on nodes trading GPU utilization against network contention "
    "(DeepShare's reward, exact).",
    options=ContentionPlacementOptions,
    run=run,
    problem_class="MILP",
    needs=frozenset({Feature.MILP}),
)
