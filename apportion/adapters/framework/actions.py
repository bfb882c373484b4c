"""A round as actions, one per job, the same for every scheduler: what the round does to the
job (`Kind`), why, and the integration's commands that do it.

- a waiting job the round runs: START, the integration's `start` commands;
- a running job the round moves to another type or other GPUs: MOVE, its `stop` commands,
  then (`then`, once the scheduler has it back in the queue) its `start` commands;
- a running job the round keeps where it is: KEEP, no command;
- a running job the round does not run: PREEMPT, its `stop` commands (back in the queue,
  held until a round runs it again; never cancelled);
- a waiting job the round does not run: HOLD with the integration's `hold` commands, or WAIT
  when there are none (the scheduler would not start it by itself);
- fixed jobs (they keep their GPUs) FIXED and jobs left alone SKIP, no command;
- a running job without the GPUs it asked for (`Job.fault`): REQUEUE, its `stop` commands,
  whatever the round says (a job left so would hold a node's slot and compute nothing); a job
  the round starts or moves onto its nodes waits instead (until the requeue completes the
  scheduler may still count its GPUs there);
- a job someone else holds: HELD when it waits (no command: the hold is theirs to release);
  when it runs, the round may keep it or stop it (PREEMPT, it then stays held), never move it.

Requeues and preemptions come first (they free GPUs), then moves and starts in the round's
serving order, then holds; jobs with nothing to do last. A job that the integration says
cannot take the round's placement (`Fits`) waits, with that reason.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from apportion.adapters.framework.integration import Commands, Fits, Integration
from apportion.adapters.framework.view import Job, View
from apportion.mechanism import Assignment, Round


class Kind(StrEnum):
    """What a round does to a job."""

    START = "start"
    MOVE = "move"
    KEEP = "keep"
    PREEMPT = "preempt"
    HOLD = "hold"
    WAIT = "wait"
    FIXED = "fixed"
    SKIP = "skip"
    REQUEUE = "requeue"
    HELD = "held"


#: Kinds whose job runs after the round.
RUNS = frozenset({Kind.START, Kind.MOVE, Kind.KEEP})
#: Kinds whose commands leave the job held by the adapter.
HOLDS = frozenset({Kind.PREEMPT, Kind.HOLD, Kind.REQUEUE})
_ORDER = (Kind.REQUEUE, Kind.PREEMPT, Kind.MOVE, Kind.START, Kind.HOLD)


@dataclass(frozen=True)
class Action:
    """One job's part of the round: the commands to run, in order, and why; `then` are run
    once the job is back in the queue after the `stop` among `commands`."""

    job: str
    kind: Kind
    reason: str
    commands: Commands = ()
    gpu_type: str | None = None
    placement: dict[str, int] = field(default_factory=dict)
    then: Commands = ()


def plan_round(integration: Integration[Any, Any], view: View[Any], rnd: Round) -> list[Action]:
    """The actions that enact `rnd` on the jobs of `view` (see the module's docstring)."""
    served = {a.job: (rank, a) for rank, a in enumerate(rnd.assignments)}
    actions = [_faulty(integration, job) for job in view.faulty.values()]
    for job_id, job in view.jobs.items():
        if job_id in view.fixed:
            actions.append(Action(job_id, Kind.FIXED, _fixed_reason(job), gpu_type=job.gpu_type))
        elif job_id in served and not _held_moved(view, job, served[job_id][1]):
            rank, assignment = served[job_id]
            actions.append(_served(integration, view, job, assignment, rank))
        else:
            why = rnd.reasons.get(job_id, "the policy gives it no time now")
            if job_id in served:
                why = "the round moves it, which would restart it"
            if job_id in view.held:
                why = f"{why}; it stays held: {view.held[job_id]}"
            actions.append(_not_served(integration, job, why))
    actions += [
        Action(j, Kind.HELD, f"left held: {why}")
        for j, why in view.held.items()
        if j not in view.jobs and j not in view.faulty
    ]
    actions += [Action(j, Kind.SKIP, f"left alone: {why}") for j, why in view.skipped.items()]
    return sorted(actions, key=lambda a: _ORDER.index(a.kind) if a.kind in _ORDER else len(_ORDER))


def _faulty(integration: Integration[Any, Any], job: Job[Any]) -> Action:
    if job.pinned is not None:
        return Action(job.id, Kind.SKIP, f"left running: {job.fault}, but {job.pinned}")
    reason = f"requeued (held): {job.fault}; a later round starts it again with its GPUs"
    return Action(job.id, Kind.REQUEUE, reason, integration.stop(job))


def _held_moved(view: View[Any], job: Job[Any], a: Assignment) -> bool:
    """A running job someone else holds, which the round would move: stopped instead (a
    move restarts it, and its hold is not the adapter's to release)."""
    return job.id in view.held_running and not a.kept


def _blocked(view: View[Any], placement: Mapping[str, int]) -> str | None:
    """Why a node of `placement` cannot take a job now: a faulty job's requeue is under way."""
    for other in view.faulty.values():
        for node in placement:
            if node in other.placement:
                return f"{node} still counts the GPUs of job {other.id}, requeued: {other.fault}"
    return None


def _served(
    integration: Integration[Any, Any], view: View[Any], job: Job[Any], a: Assignment, rank: int
) -> Action:
    where = f"{a.gpu_type} ({nodes_text(a.placement)})"
    if job.running and a.kept:
        return Action(job.id, Kind.KEEP, f"keeps its GPUs on {where}", (), a.gpu_type, a.placement)
    misfit = integration.misfit(job, a.placement) if isinstance(integration, Fits) else None
    misfit = misfit or _blocked(view, a.placement)
    if misfit is not None:
        return _not_served(integration, job, f"the round places it on {where}, but {misfit}")
    start = integration.start(job, a.gpu_type, a.placement, rank)
    why = f"round priority {_priority(a.priority)}"
    if job.running:
        old = f"{job.gpu_type} ({nodes_text(job.placement)})"
        reason = f"moves from {old} to {where}; {why}; requeued, restarted once back in the queue"
        stop = integration.stop(job)
        return Action(job.id, Kind.MOVE, reason, stop, a.gpu_type, a.placement, start)
    return Action(job.id, Kind.START, f"runs on {where}; {why}", start, a.gpu_type, a.placement)


def _not_served(integration: Integration[Any, Any], job: Job[Any], why: str) -> Action:
    if job.running:
        reason = f"preempted (requeued, held): {why}"
        return Action(job.id, Kind.PREEMPT, reason, integration.stop(job))
    hold = integration.hold(job)
    if not hold:
        return Action(job.id, Kind.WAIT, f"waits (held): {why}")
    reason = f"waits: {why}; held so it does not start outside the round"
    return Action(job.id, Kind.HOLD, reason, hold)


def _fixed_reason(job: Job[Any]) -> str:
    where = f"{job.gpu_type} ({nodes_text(job.placement)})"
    if job.pinned is not None:
        return f"keeps running on {where}: {job.pinned}"
    return f"keeps running on {where}: preemption is not allowed (--allow-preemption)"


def nodes_text(placement: Mapping[str, int]) -> str:
    """`n1:4+n2:4`."""
    return "+".join(f"{node}:{gpus}" for node, gpus in placement.items()) or "-"


def _priority(value: float) -> str:
    return "inf: no time on that type yet" if math.isinf(value) else f"{value:.3g}"


def render(integration: Integration[Any, Any], actions: list[Action], view: View[Any]) -> str:
    """The dry-run text: per job a `# job J (key, N GPUs): kind: reason` line, then its exact
    commands, one per line."""
    lines = []
    for action in actions:
        job = view.jobs.get(action.job)
        label = f"job {action.job}" + (f" ({job.label()})" if job is not None else "")
        lines.append(f"# {label}: {action.kind}: {action.reason}")
        lines += [integration.show(command) for command in (*action.commands, *action.then)]
    return "\n".join(lines) + ("\n" if lines else "")
