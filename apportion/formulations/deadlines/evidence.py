"""Why each job of a deadline admission is where it is (`options.explain`; docs/EXPLANATIONS.md).

Imported only when an explanation is asked for. Per SLO job, from the returned plan:

- `granted`: guaranteed an option (kept or newly admitted), with its slots;
- `deadline_unreachable`: no option can be met even alone (`report.cannot_fit` says why);
- `capacity`: rejected, and it fits before none of its deadlines next to the earlier guarantees
  (each kept at its chosen option) and the holders alone: a feasibility MILP decides it
  (`earliest.check`);
- `lower_value`: rejected, but it would fit next to the earlier guarantees: the room went to jobs
  admitted in this solve, named with their value;

and for every rejected SLO job the earliest deadline that could be guaranteed now with every
other decision kept (`earliest`). Its rows are the capacity rows of the slots before its latest
deadline with no room for it in the plan: `capacity[t]`, or `capacity_level[t/s]` where the
chain-size row of held GPUs is the one that is full. Best-effort jobs are `granted` when they run
this lease on spare GPUs, else `capacity`.
"""

from __future__ import annotations

import numpy as np

from apportion.formulations.deadlines.decision import Admission, LeaseRun
from apportion.formulations.deadlines.earliest import Earliest, check, earliest, fits_by, room_left
from apportion.formulations.deadlines.problem import LeaseProblem
from apportion.formulations.deadlines.report import cannot_fit, slot_list, too_large
from apportion.solver.arraytypes import IntArray
from apportion.solver.context import SolveContext
from apportion.solver.explain import DecisionEvidence, Reason
from apportion.solver.result import Metric

NOTE = (
    "reasons read from the returned lease plan; the earliest deadline of a rejected job is the "
    "smallest at which it would be admitted with every other decision kept (feasibility MILPs)"
)
#: Jobs named per `lower_value` sentence (all of them are in its detail).
SHOWN = 5


class Reasons:
    """The codes, words, rows and numbers of one admission, job by job."""

    def __init__(
        self, problem: LeaseProblem, admission: Admission, horizon: int, ctx: SolveContext
    ) -> None:
        self.problem, self.plan, self.ctx = problem, admission.plan, ctx
        self.horizon = max(horizon, problem.horizon)
        self.broken = admission.broken
        self.room = self.plan.room(problem)
        self.has_option = np.zeros(problem.num_jobs, dtype=bool)
        self.has_option[problem.row_job[problem.row_feasible]] = True
        self.codes: dict[int, str] = {}
        self.texts: dict[int, str] = {}
        self.rows: dict[int, list[str]] = {}
        self.detail: dict[int, dict[str, Metric]] = {}

    def evidence(self) -> DecisionEvidence:
        return DecisionEvidence(self.codes, self.texts, self.rows, self.detail, "guaranteed", NOTE)

    def put(self, j: int, code: str, text: str, **detail: Metric) -> None:
        self.codes[j], self.texts[j], self.detail[j] = code, text, detail

    def best_effort(self, j: int, lease: LeaseRun) -> None:
        p = self.problem
        if lease.mode.get(j) == "held":
            until = float(p.holdings.until[j])
            self.put(j, Reason.GRANTED, f"best-effort: keeps the GPUs it holds until {until:g}")
        elif j in lease.placements:
            self.put(j, Reason.GRANTED, "best-effort: runs this lease on spare GPUs")
        elif p.leases[j] == 0:
            self.put(j, Reason.GRANTED, "best-effort: nothing left to run")
        elif not p.fits_cluster[j]:
            self.put(j, Reason.CAPACITY, f"best-effort: {too_large(p, j)}")
        else:
            self.put(j, Reason.CAPACITY, f"best-effort: no room for {p.demand[j]} GPUs this lease")

    def granted(self, j: int) -> None:
        p, row = self.problem, int(self.plan.row[j])
        how = "guarantee kept" if p.guaranteed[j] else "admitted"
        deadline, value = float(p.row_time[row]), float(p.row_value[row])
        slots = slot_list(self.plan, j)
        text = f"{how}: deadline {deadline:g} (value {value:g})" + (
            f" in slots {slots}" if slots else ""
        )
        self.put(
            j,
            Reason.GRANTED,
            text,
            option=int(p.row_option[row]),
            deadline=deadline,
            value=value,
            slots=slots,
            reserved_gpus=int(p.reserve[j]),
        )

    def rejected(self, j: int) -> None:
        """deadline_unreachable, capacity or lower_value."""
        p = self.problem
        broken = "guarantee broken: " if j in self.broken else ""
        if not self.has_option[j]:
            alone = p.lease_start + float(p.first_slot[j] + p.leases[j]) * p.lease
            if np.isfinite(p.done_by[j]):
                alone = float(p.done_by[j])
            text = f"{broken}cannot meet any deadline even alone: {cannot_fit(p, j)}"
            self.put(j, Reason.DEADLINE_UNREACHABLE, text, earliest_alone=alone)
        else:
            rows = p.rows_of(j)
            limit = int(p.row_slots[rows][p.row_feasible[rows]].max())
            self.rows[j] = full_rows(p, self.room, j, limit)
            count = int(p.leases[j])
            need = f"{count} lease{'s' * (count != 1)} of {p.reserve[j]} GPUs before slot {limit}"
            fits = self.fits_next_to_earlier(j, limit)
            if fits:
                self.lost_to_value(j, limit, broken, need)
            else:
                holders = (p.holdings.slots > p.first_slot[j]).any()  # hold into its window
                held = " and holders" if holders else ""
                text = f"{broken}no room for {need}: those slots are full of earlier guarantees"
                unsure = " (not decided within the time budget)" if fits is None else ""
                self.put(j, Reason.CAPACITY, text + held + unsure)

    def add_earliest(self, j: int) -> None:
        """The earliest deadline that could be guaranteed now, in j's words and numbers."""
        found = _earliest_detail(
            self.problem, j, earliest(self.problem, self.plan, j, self.horizon, self.ctx)
        )
        self.texts[j] += _earliest_words(found)
        self.detail[j].update(found)

    def fits_next_to_earlier(self, j: int, limit: int) -> bool | None:
        """Whether j fits by `limit` next to the guarantees given before this solve alone."""
        p = self.problem
        earlier = self.plan.admitted & p.guaranteed
        earlier[j] = False
        by = fits_by(room_left(p, self.plan, earlier, p.horizon), p, j)
        if by is not None and by <= limit:
            return True
        return check(p, self.plan, earlier, j, limit, self.ctx)

    def lost_to_value(self, j: int, limit: int, broken: str, need: str) -> None:
        p, plan = self.problem, self.plan
        window = np.arange(p.first_slot[j], limit)
        takers = np.flatnonzero(plan.admitted & ~p.guaranteed & plan.slots[:, window].any(axis=1))
        values = p.row_value[plan.row[takers]]
        order = np.argsort(-values, kind="stable")
        takers, values = takers[order], values[order]
        names = [p.job_ids[t] for t in takers]
        own = float(p.row_value[p.rows_of(j)].max())
        shown = ", ".join(names[:SHOWN]) + (" …" if len(names) > SHOWN else "")
        text = (
            f"{broken}lost to jobs admitted now of more value: {shown} (value {values.sum():g}, "
            f"its own at most {own:g}) hold the room for {need}"
        )
        self.put(
            j,
            Reason.LOWER_VALUE,
            text,
            taken_by=",".join(names),
            taken_value=float(values.sum()),
            own_value=own,
        )


def full_rows(problem: LeaseProblem, room: IntArray, j: int, limit: int) -> list[str]:
    """The capacity rows of slots first_j … limit − 1 with no room for j: the plain row, or the
    smallest chain size of held GPUs that is short."""
    slots = np.arange(problem.first_slot[j], limit)
    levels = np.flatnonzero(problem.reserve_levels[j])
    short = room[np.ix_(slots, levels)] < problem.reserve[j]
    out = []
    for t, row in zip(slots.tolist(), short.tolist(), strict=True):
        if not any(row):
            continue
        k = int(levels[row.index(True)])
        out.append(f"capacity[{t}]" if k == 0 else f"capacity_level[{t}/{problem.ladder[k]}]")
    return out


def _earliest_detail(problem: LeaseProblem, j: int, found: Earliest) -> dict[str, Metric]:
    def at(slots: int | None) -> float | None:
        if found.computed or slots is None:
            return None
        return problem.lease_start + slots * problem.lease

    return {
        "earliest_deadline": found.deadline(problem, j),
        "earliest_slots": found.slots,
        "earliest_computed": found.computed,
        "earliest_at_least": at(found.lower),
        "earliest_at_most": at(found.upper),
        "horizon_slots": found.horizon,
    }


def _earliest_words(detail: dict[str, Metric]) -> str:
    at = detail["earliest_deadline"]
    if at is not None:
        return f"; earliest deadline that could be guaranteed now: {at:g}"
    if not detail["earliest_computed"]:
        low, high = detail["earliest_at_least"], detail["earliest_at_most"]
        shown = "" if high is None else f" (between {low:g} and {high:g})"
        return f"; earliest deadline that could be guaranteed now: not computed{shown}"
    return f"; no deadline within the {detail['horizon_slots']}-slot horizon could be guaranteed"


def decision_evidence(
    problem: LeaseProblem,
    admission: Admission,
    lease: LeaseRun,
    horizon_slots: int,
    ctx: SolveContext,
) -> DecisionEvidence:
    """Every job's reason (module docstring); the searches use what is left of the budget."""
    # Books of their own: the solver report speaks for the models behind the answer.
    own = SolveContext(ctx.options, budget=ctx.budget)
    reasons = Reasons(problem, admission, horizon_slots, own)
    rejected = []
    for j in range(problem.num_jobs):  # explanations only: never on the solve's path
        if not problem.is_slo[j]:
            reasons.best_effort(j, lease)
        elif admission.plan.admitted[j]:
            reasons.granted(j)
        else:
            reasons.rejected(j)
            rejected.append(j)
    # Every code first: the searches, which may use up the budget, come last, each with an
    # equal share of what is left (a long search does not starve the jobs after it).
    for done, j in enumerate(rejected):
        left = own.budget.left()
        share = None if left is None else own.budget.within(left / (len(rejected) - done))
        reasons.ctx = own if share is None else SolveContext(own.options, budget=share)
        reasons.add_earliest(j)
    return reasons.evidence()
