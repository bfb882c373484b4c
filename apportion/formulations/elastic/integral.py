"""One configuration per job: the MILP of `model` with a policy's value per candidate, solved
over classes of identical jobs, and its answer per job."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from apportion.formulations.elastic.candidates import ElasticJobs
from apportion.formulations.elastic.classes import merge
from apportion.formulations.elastic.core import PLAIN, Reading
from apportion.formulations.elastic.model import ChoiceModel, Presolve, build, chosen
from apportion.formulations.elastic.search import solve_guided
from apportion.solver.arrays import ClusterArrays
from apportion.solver.arraytypes import BoolArray, FloatArray, IntArray
from apportion.solver.backends import Solution
from apportion.solver.context import SolveContext
from apportion.solver.status import Status, Termination


@dataclass
class IntegralAnswer:
    status: Status
    pick: IntArray  # per job, its candidate (index into the jobs' candidates) or −1
    solution: Solution | None
    choice: ChoiceModel | None
    kept: IntArray  # the model's candidates as indices into the jobs' candidates
    classes: int
    warnings: list[str] = field(default_factory=list)
    #: Why the answer's search stopped, where its deciding solve does not say it alone.
    termination: Termination | None = None


def prepare(
    name: str,
    problem: ClusterArrays,
    jobs: ElasticJobs,
    value: FloatArray,
    keep: BoolArray,
    merge_identical: bool,
    presolve: Presolve = "auto",
) -> tuple[ChoiceModel, IntArray, FloatArray]:
    """The model over the candidates in `keep` (pinned jobs' own always kept, then left out of
    the model): the model, the kept candidates' old indices and their values."""
    c = jobs.candidates
    sub, kept = jobs.restrict(keep | jobs.pinned[c.job])
    active = sub.has_candidates() & ~sub.pinned
    classes = merge(sub, value[kept], active, merge_identical)
    choice = build(
        name,
        sub,
        classes,
        problem.gpu_count,
        problem.gpu_names,
        problem.job_ids,
        integral=True,
        presolve=presolve,
    )
    return choice, kept, value[kept][classes.column]


def answer(
    ctx: SolveContext, choice: ChoiceModel, kept: IntArray, solution: Solution
) -> IntegralAnswer:
    """Each job's pick from a solved model, as indices into the full candidate list."""
    size = choice.classes.size
    if not solution.status.has_solution:
        pick = np.full(choice.jobs.num_jobs, -1, dtype=np.int64)
        return IntegralAnswer(solution.status, pick, solution, choice, kept, size)
    local = chosen(choice, solution)
    pick = np.where(local >= 0, kept[np.maximum(local, 0)], -1)
    return IntegralAnswer(solution.status, pick, solution, choice, kept, size)


def solve_integral(
    name: str,
    ctx: SolveContext,
    problem: ClusterArrays,
    jobs: ElasticJobs,
    value: FloatArray,
    keep: BoolArray,
    presolve: Presolve = "auto",
    reading: Reading = PLAIN,
) -> IntegralAnswer:
    """Maximize Σ value_c over the chosen candidates; `reading` states the policy's objective
    in it (its gaps are on that objective)."""
    merged = ctx.options.merge_identical
    choice, kept, values = prepare(name, problem, jobs, value, keep, merged, presolve)
    over = pinned_overflow(problem, jobs)
    if over or choice.y.size == 0:
        pick = np.full(jobs.num_jobs, -1, dtype=np.int64)
        c = jobs.candidates
        held = np.flatnonzero(jobs.pinned[c.job])
        pick[c.job[held]] = held
        if not over:  # nothing to choose: the pinned jobs run, everyone else waits
            return IntegralAnswer(Status.OPTIMAL, pick, None, choice, kept, choice.classes.size)
        text = f"pinned jobs alone hold more GPUs than there are of {', '.join(over)}"
        none = np.full(jobs.num_jobs, -1, dtype=np.int64)
        return IntegralAnswer(Status.INFEASIBLE, none, None, choice, kept, 0, [text])
    solution = solve_guided(ctx, choice, values, reading=reading)
    return answer(ctx, choice, kept, solution)


def pinned_overflow(problem: ClusterArrays, jobs: ElasticJobs) -> list[str]:
    """GPU types whose pinned jobs alone hold more GPUs than the type has."""
    c = jobs.candidates
    held = jobs.pinned[c.job]
    use = np.bincount(c.gpu[held], weights=c.gpus[held], minlength=problem.num_types)
    return [problem.gpu_names[k] for k in np.flatnonzero(use > problem.gpu_count)]


def solve_again(
    ctx: SolveContext,
    problem: ClusterArrays,
    jobs: ElasticJobs,
    value: FloatArray,
    keep: BoolArray,
    extra_gpu: int | None = None,
    force: tuple[int, int] | None = None,
    presolve: Presolve = "auto",
) -> float | None:
    """The optimum Σ value of the same model with one more GPU of type `extra_gpu`, or with
    `force = (job, n)`: at least n members of the job's class running. None when the budget is
    spent or the solve proves nothing."""
    if ctx.budget.spent():
        return None
    count = problem.gpu_count.copy()
    if extra_gpu is not None:
        count[extra_gpu] += 1
    bigger = replace(problem, gpu_count=count)
    merged = ctx.options.merge_identical
    choice, _, values = prepare("explain", bigger, jobs, value, keep, merged, presolve)
    if force is not None:
        job, least = force
        member = [g for g, m in enumerate(choice.classes.members) if job in m]
        if not member:
            return None
        g = member[0]
        row = (choice.classes.owner == g).astype(float)[None, :]
        choice.model.add_constraints("force", {choice.y: row}, lower=float(least))
    solution = solve_guided(ctx, choice, values, auxiliary=True)
    if solution.status is not Status.OPTIMAL or solution.objective is None:
        return None
    held = jobs.pinned[jobs.candidates.job]  # pinned jobs run outside the model
    return float(solution.objective) + float(value[held].sum())
