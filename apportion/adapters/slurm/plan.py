"""A round as Slurm commands: one action per job, each with its `scontrol` commands and a
one-line reason.

How a round is enacted (Slurm 22.05, as root):

- a pending job the round runs: `update JobId=J Features=TYPE ReqNodeList=NODES StartTime=now`
  (the type through the node feature: changing a pending job's GPU *type* leaves it
  BadConstraints forever; the nodes so Slurm uses the GPUs the round counted free; StartTime
  clears the BeginTime a requeue sets), then `release J` if it is held, then `update JobId=J
  Priority=P`, higher for jobs the round served first;
- a running job the round moves to another type or other GPUs: `requeuehold J`, then as above
  once Slurm lists it as pending again (a requeue sets a BeginTime when it completes, so the
  StartTime must come after);
- a running job the round does not keep: `requeuehold J` (preempted: back in the queue, held
  until a round runs it again);
- a pending job that waits and is not held: `hold J`, so Slurm does not start it behind the
  round's back;
- everything else (jobs kept, jobs already held, jobs left alone): no command.

Nothing is ever cancelled. A job whose request cannot take the round's placement (`--gres=gpu:8`
asks for 8 GPUs on one node; the round split it over two) waits, with that reason.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from apportion.adapters.slurm.slurmcli import SlurmJob
from apportion.adapters.slurm.snapshot import View
from apportion.mechanism import Assignment, Round

#: Priority given to the first job a round starts; later ones get one less each.
PRIORITY_TOP = 100_000


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


@dataclass(frozen=True)
class Action:
    """One job's part of the round: the commands to run, in order, and why; `then` are run
    once the job is back in the queue after the requeue among `commands`."""

    job: str
    kind: Kind
    reason: str
    commands: tuple[tuple[str, ...], ...] = ()
    gpu_type: str | None = None
    placement: dict[str, int] = field(default_factory=dict)
    then: tuple[tuple[str, ...], ...] = ()


def plan_round(view: View, rnd: Round) -> list[Action]:
    """The actions that enact `rnd` on the jobs of `view`: preemptions first (they free GPUs),
    then starts in the round's serving order, then holds; jobs with nothing to do last."""
    served = {a.job: (rank, a) for rank, a in enumerate(rnd.assignments)}
    actions = []
    for job_id, job in view.jobs.items():
        if job_id in view.fixed:
            actions.append(
                Action(job_id, Kind.FIXED, _fixed_reason(job), gpu_type=job.running_type)
            )
            continue
        chosen = served.get(job_id)
        if chosen is None:
            actions.append(_not_served(job, _why_waiting(view, rnd, job_id)))
        else:
            rank, assignment = chosen
            actions.append(_served(job, assignment, PRIORITY_TOP - rank))
    actions += [Action(j, Kind.SKIP, f"left alone: {why}") for j, why in view.skipped.items()]
    order = [Kind.PREEMPT, Kind.MOVE, Kind.START, Kind.HOLD]
    return sorted(actions, key=lambda a: order.index(a.kind) if a.kind in order else len(order))


def _served(job: SlurmJob, a: Assignment, priority: int) -> Action:
    where = f"{a.gpu_type} ({_nodes(a.placement)})"
    if job.running and a.kept:
        return Action(job.id, Kind.KEEP, f"keeps its GPUs on {where}", (), a.gpu_type, a.placement)
    misfit = _misfit(job, a.placement)
    if misfit is not None:
        return _not_served(job, f"the round places it on {where}, but {misfit}")
    start = _start_commands(job.id, a.gpu_type, a.placement, priority, release=True)
    why = f"round priority {_priority(a.priority)}"
    if job.running:
        old = f"{job.running_type} ({_nodes(job.placement)})"
        requeue = (("scontrol", "requeuehold", job.id),)
        reason = f"moves from {old} to {where}; {why}; requeued, restarted once back in the queue"
        return Action(job.id, Kind.MOVE, reason, requeue, a.gpu_type, a.placement, start)
    if not job.held:
        start = tuple(c for c in start if c[1] != "release")
    return Action(job.id, Kind.START, f"runs on {where}; {why}", start, a.gpu_type, a.placement)


def _not_served(job: SlurmJob, why: str) -> Action:
    if job.running:
        commands = (("scontrol", "requeuehold", job.id),)
        return Action(job.id, Kind.PREEMPT, f"preempted (requeued, held): {why}", commands)
    if job.held:
        return Action(job.id, Kind.WAIT, f"waits (held): {why}")
    reason = f"waits: {why}; held so Slurm does not start it outside the round"
    return Action(job.id, Kind.HOLD, reason, (("scontrol", "hold", job.id),))


def _start_commands(
    job: str, gpu_type: str, placement: Mapping[str, int], priority: int, *, release: bool
) -> tuple[tuple[str, ...], ...]:
    nodes = ",".join(placement)
    update = ("scontrol", "update", f"JobId={job}", f"Features={gpu_type}")
    commands: list[tuple[str, ...]] = [(*update, f"ReqNodeList={nodes}", "StartTime=now")]
    if release:
        commands.append(("scontrol", "release", job))
    commands.append(("scontrol", "update", f"JobId={job}", f"Priority={priority}"))
    return tuple(commands)


def _misfit(job: SlurmJob, placement: Mapping[str, int]) -> str | None:
    """Why Slurm could not run the job as placed, or None: a `--gres` request asks for the
    same GPUs on each of a fixed number of nodes."""
    if not job.per_node:
        return None
    each = job.gpus // max(job.node_count, 1)
    if len(placement) == job.node_count and all(g == each for g in placement.values()):
        return None
    return f"it asks for {each} GPUs on each of {job.node_count} node(s)"


def _why_waiting(view: View, rnd: Round, job_id: str) -> str:
    if job_id in rnd.reasons:
        return rnd.reasons[job_id]
    return "the policy gives it no time now"


def _fixed_reason(job: SlurmJob) -> str:
    where = f"{job.running_type} ({_nodes(job.placement)})"
    if not job.requeue:
        return f"keeps running on {where}: Slurm cannot requeue it (--no-requeue)"
    return f"keeps running on {where}: preemption is not allowed (--allow-preemption)"


def _nodes(placement: Mapping[str, int]) -> str:
    return "+".join(f"{node}:{gpus}" for node, gpus in placement.items()) or "-"


def _priority(value: float) -> str:
    return "inf: no time on that type yet" if math.isinf(value) else f"{value:.3g}"


def render(actions: list[Action], view: View) -> str:
    """The dry-run text: per job a `# job J (key, N GPUs): reason` line, then its exact
    commands, one per line, as a shell would run them."""
    lines = []
    for action in actions:
        job = view.jobs.get(action.job)
        mapped = view.mapped.get(action.job)
        label = f"job {action.job}"
        if job is not None and mapped is not None:
            label += f" ({mapped.key}, {job.gpus} GPU{'s' if job.gpus != 1 else ''})"
        lines.append(f"# {label}: {action.kind}: {action.reason}")
        lines += [shlex.join(command) for command in (*action.commands, *action.then)]
    return "\n".join(lines) + ("\n" if lines else "")
