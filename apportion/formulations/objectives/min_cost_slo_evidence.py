"""Why each job of a min-cost-with-SLOs answer is where it is (`options.explain`;
docs/EXPLANATIONS.md). Imported only when an explanation is asked for.

- `granted`: its SLO is met (T_j·X_j ≥ d_j), at Σ_k p_k s_j X_jk per hour;
- `deadline_unreachable`: the deadline has passed, or d_j exceeds its fastest usable throughput;
- `no_deadline`: no SLO asked, so the cheapest answer gives it no time;
- an SLO given up (not all fit) is `lower_value` or `capacity`, from V_j, the value of the best
  answer that meets it (v_i = 1 to maximize the count, w_i to maximize the weight):

      V_j = max Σ_i v_i z_i  s.t. z_j = 1 and the SLO MILP of `slo_milp`, per job (no groups)

  V_j < V*: `lower_value` (meeting it costs SLOs worth more than it, by count or weight).
  V_j = V*: `capacity` (an answer meeting it instead meets as much, but the GPUs it needs went
  to the cheapest such answer). Its rows are the capacity rows of the types it can use whose
  idle GPUs could not carry its SLO alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from apportion.formulations.objectives.slo_milp import VALUE_GAP
from apportion.solver.arrays import ClusterArrays
from apportion.solver.arraytypes import BoolArray, FloatArray, IntArray
from apportion.solver.context import SolveContext, SolveRequest
from apportion.solver.explain import DecisionEvidence, Reason
from apportion.solver.model import Model, Sense, Take
from apportion.solver.result import Metric
from apportion.solver.status import Status

NOTE = (
    "reasons read from the allocation; an SLO given up is compared with the best answer that "
    "meets it (one MILP per job, within the time budget)"
)
#: V* − V_j differences below this share of V* are round-off.
VALUE_TOLERANCE = 1e-6
#: Jobs named per `lower_value` sentence.
SHOWN = 5


@dataclass(frozen=True, eq=False)
class SloAnswer:
    """What the policy decided: allocation, d_j, which SLOs are met, which cannot be met even
    alone, the policy's words per job, the candidates of its MILP and their value v_j."""

    allocation: FloatArray
    required: FloatArray
    met: BoolArray
    lost: IntArray
    texts: dict[int, str]  # the policy's reason per job
    candidates: IntArray
    value: FloatArray  # per candidate
    counting: bool


def forced_value(
    problem: ClusterArrays, answer: SloAnswer, j: int, ctx: SolveContext
) -> tuple[float, IntArray] | None:
    """(V_j, the candidates met in that answer), or None when not decided in the budget."""
    c = answer.candidates
    usable = np.where(problem.eligible[c], problem.throughput[c], 0.0)
    job, gpu = np.nonzero(usable)
    labels, names = [problem.job_ids[i] for i in c], problem.gpu_names
    model = Model("slo_forced")
    x = model.add_variables(
        "x", job.size, coords=(("job", Take(labels, job)), ("gpu", Take(names, gpu)))
    )
    lower = (c == j).astype(float)
    z = model.add_variables("met", c.size, lower=lower, upper=1.0, integer=True)
    nx, identity = job.size, sp.identity(c.size, format="csr")
    rate = usable[job, gpu] / answer.required[c][job]
    model.add_constraints(
        "slo",
        {x: sp.csr_matrix((rate, (job, np.arange(nx))), (c.size, nx)), z: -identity},
        lower=0.0,
    )
    per_job = sp.csr_matrix((np.ones(nx), (job, np.arange(nx))), (c.size, nx))
    model.add_constraints("time", {x: per_job, z: -identity}, upper=0.0)
    size = problem.scale_factor[c][job]
    per_type = sp.csr_matrix((size, (gpu, np.arange(nx))), (problem.num_types, nx))
    model.add_constraints("capacity", {x: per_type}, upper=problem.gpu_count)
    model.set_objective({z: answer.value}, Sense.MAXIMIZE)
    solution = ctx.solve(SolveRequest(model, mip_gap=VALUE_GAP))
    if solution.status is not Status.OPTIMAL or solution.objective is None:
        return None
    return float(solution.objective), c[solution.value(z) > 0.5]


def idle_gpus(problem: ClusterArrays, allocation: FloatArray) -> FloatArray:
    used: FloatArray = problem.scale_factor @ allocation
    return np.maximum(problem.gpu_count - used, 0.0)


def reachable(problem: ClusterArrays, j: int, idle: FloatArray) -> float:
    """The most throughput j could get from idle GPUs alone: its time on the fastest types
    first, each up to what is idle there (a fractional knapsack: exact for one job)."""
    rate = np.where(problem.eligible[j], problem.throughput[j], 0.0)
    share = idle / problem.scale_factor[j]
    left, total = 1.0, 0.0
    for k in np.argsort(-rate, kind="stable"):
        time = min(left, float(share[k])) if rate[k] > 0 else 0.0
        total, left = total + time * float(rate[k]), left - time
    return total


class Reasons:
    """The codes, words, rows and numbers of one answer, job by job."""

    def __init__(self, problem: ClusterArrays, answer: SloAnswer, ctx: SolveContext) -> None:
        self.problem, self.answer, self.ctx = problem, answer, ctx
        self.idle = idle_gpus(problem, answer.allocation)
        self.eff = np.einsum("jk,jk->j", problem.throughput, answer.allocation)
        where = np.isin(answer.candidates, np.flatnonzero(answer.met))
        self.best = float(answer.value[where].sum())
        self.codes: dict[int, str] = {}
        self.texts: dict[int, str] = {}
        self.rows: dict[int, list[str]] = {}
        self.detail: dict[int, dict[str, Metric]] = {}

    def put(self, j: int, code: str, text: str, **detail: Metric) -> None:
        self.codes[j], self.texts[j], self.detail[j] = code, text, detail

    def granted(self, j: int) -> None:
        p, d = self.problem, float(self.answer.required[j])
        cost = float(np.nansum(p.price_per_hour * p.scale_factor[j] * self.answer.allocation[j]))
        if d == 0:
            self.put(j, Reason.GRANTED, "no steps remaining: SLO met", cost_per_hour=0.0)
            return
        text = f"SLO met: {self.eff[j]:.6g} ≥ {d:.6g} steps/s at {cost:.6g} per hour"
        self.put(
            j,
            Reason.GRANTED,
            text,
            cost_per_hour=cost,
            throughput=float(self.eff[j]),
            required_throughput=d,
        )

    def unreachable(self, j: int) -> None:
        p = self.problem
        fastest = float(np.where(p.eligible[j], p.throughput[j], 0.0).max(initial=0.0))
        now = p.now if p.now is not None else np.nan
        alone = float(now + p.steps_remaining[j] / fastest) if fastest > 0 else None
        d = float(self.answer.required[j])
        self.put(
            j,
            Reason.DEADLINE_UNREACHABLE,
            self.answer.texts[j],
            required_throughput=d if np.isfinite(d) else None,
            fastest_throughput=fastest,
            earliest_alone=alone,
        )

    def given_up(self, j: int) -> None:
        """capacity or lower_value, from V_j (module docstring)."""
        p, a = self.problem, self.answer
        d, v = float(a.required[j]), float(a.value[np.flatnonzero(a.candidates == j)[0]])
        rate = np.where(p.eligible[j], p.throughput[j], 0.0)
        need = np.divide(
            p.scale_factor[j] * d, rate, out=np.full(rate.size, np.inf), where=rate > 0
        )
        short = (rate > 0) & (self.idle < need * (1 - VALUE_TOLERANCE))
        self.rows[j] = [f"capacity[{n}]" for n, s in zip(p.gpu_names, short, strict=True) if s]
        reach = reachable(p, j, self.idle)
        left = f"the GPUs left give it at most {reach:.6g} of the {d:.6g} steps/s it needs"
        detail: dict[str, Metric] = {
            "required_throughput": d,
            "reachable_on_idle": reach,
            "own_value": v,
        }
        forced = None if self.ctx.budget.spent() else forced_value(p, a, j, self.ctx)
        if forced is None:
            text = f"{left} (whether it lost to more value was not decided in the time budget)"
            self.put(j, Reason.CAPACITY, text, **detail)
            return
        value, met_there = forced
        unit = "SLOs" if a.counting else "weight"
        detail.update(best_value=self.best, best_value_meeting_it=value)
        if value >= self.best - VALUE_TOLERANCE * max(self.best, 1.0):
            text = f"{left}; an answer meeting it instead meets as much {unit} and costs no less"
            self.put(j, Reason.CAPACITY, text, **detail)
            return
        lost = np.setdiff1d(np.flatnonzero(a.met), met_there)
        names = [p.job_ids[i] for i in lost]
        shown = ", ".join(names[:SHOWN]) + (" …" if len(names) > SHOWN else "")
        example = f", giving up e.g. {shown}" if names else ""
        most = f"{value:g} SLO{'s' * (value != 1)}" if a.counting else f"weight {value:g}"
        text = f"meeting its SLO, at most {most} could be met, not {self.best:g}{example}"
        detail.update(displaced_jobs=",".join(names))
        self.put(j, Reason.LOWER_VALUE, f"{text}; {left}", **detail)

    def evidence(self) -> DecisionEvidence:
        return DecisionEvidence(self.codes, self.texts, self.rows, self.detail, "SLO met", NOTE)


def slo_evidence(problem: ClusterArrays, answer: SloAnswer, ctx: SolveContext) -> DecisionEvidence:
    """Every job's reason (module docstring); jobs no allocation can serve keep their data
    reason (`no_throughput`, `gang_does_not_fit`)."""
    # Books of their own: the solver report speaks for the models behind the answer.
    reasons = Reasons(problem, answer, SolveContext(ctx.options, budget=ctx.budget))
    data = problem.unplaceable_reasons()
    lost = set(answer.lost.tolist())
    has_slo = ~np.isnan(problem.deadline)
    for j in range(problem.num_jobs):  # explanations only: never on the solve's path
        if has_slo[j] and answer.met[j]:
            reasons.granted(j)
        elif j in data:
            continue
        elif not has_slo[j]:
            reasons.put(j, Reason.NO_DEADLINE, answer.texts.get(j, "no deadline"))
        elif j in lost:
            reasons.unreachable(j)
        else:
            reasons.given_up(j)
    return reasons.evidence()
