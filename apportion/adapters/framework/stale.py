"""Does a round's plan still hold? Asked after a command failed or was slow: the scheduler
may have restarted, lost or changed what the plan was made on, and a plan enacted on a view
that no longer holds starts jobs on GPUs that are not free.

The plan is stale when, in a fresh reading of the scheduler,

- a node the plan hands out is gone, unusable or of another type;
- a managed job runs without the GPUs it asked for (`Job.fault`);
- a job the plan has not acted on yet (or failed to) no longer stands where the plan saw it
  (started, stopped or moved by someone else), or a job the plan could not stop still holds
  the GPUs the plan gave to others;
- a job the plan started runs somewhere else than planned;
- a managed job runs that the plan did not know of.

Jobs that ended by themselves only free GPUs: they do not make a plan stale.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

import structlog

from apportion.adapters.framework.actions import Action, Kind, nodes_text
from apportion.adapters.framework.integration import Integration, ReadError, Restarts
from apportion.adapters.framework.view import Job, Managed, View


def recheck(
    integration: Integration[Any, Any],
    view: View[Any],
    plan: Iterable[Action],
    done: set[str],
    failed: set[str],
) -> str | None:
    """Read the scheduler again: why the plan made on `view` no longer holds, or None."""
    try:
        fresh = integration.managed(integration.read())
    except ReadError as exc:
        return f"cannot read {integration.name} again: {exc}"
    except Exception as exc:  # a bug: nothing more is enacted on a view it cannot check
        structlog.get_logger(f"apportion.{integration.name}").exception("reading_failed")
        return f"reading {integration.name} again failed: {type(exc).__name__}: {exc}"
    return stale(view, fresh, plan, done, failed)


def stale(
    view: View[Any],
    fresh: Managed[Any],
    actions: Iterable[Action],
    done: set[str],
    failed: set[str],
) -> str | None:
    """Why the plan made on `view` no longer holds in `fresh` (None when it does); `done`
    are the jobs whose commands all ran, `failed` those whose commands stopped at a failure
    (the others are not acted on yet)."""
    for node, (kind, _) in view.nodes.items():
        if fresh.nodes.get(node, (None, 0))[0] != kind:
            return f"node {node} is no longer usable as planned"
    jobs = {job.id: job for job in fresh.jobs}
    for job in jobs.values():
        if job.fault is not None:
            return f"job {job.id}: {job.fault}"
    for action in actions:
        now = jobs.get(action.job)
        if now is None:
            continue  # ended by itself: its GPUs are free
        why = _moved(view, now, action, action.job in done, action.job in failed)
        if why is not None:
            return f"job {now.id} {why}"
    known = set(view.jobs) | set(view.faulty) | set(view.held)
    for job in jobs.values():
        if job.running and job.id not in known:
            return f"job {job.id} runs on {nodes_text(job.placement)}, unknown to the plan"
    return None


def _moved(view: View[Any], job: Job[Any], action: Action, done: bool, failed: bool) -> str | None:
    """Why `job` no longer stands as the plan expects after `action` (done, failed, or not
    run yet)."""
    before = view.jobs.get(job.id) or view.faulty.get(job.id)
    if before is None:
        return None
    started = done and action.kind in (Kind.START, Kind.KEEP) and job.running
    if started and job.placement != action.placement:
        return f"runs on {nodes_text(job.placement)}, not on {nodes_text(action.placement)}"
    if done:
        return None
    if failed and action.kind in (Kind.PREEMPT, Kind.MOVE, Kind.REQUEUE) and job.running:
        return f"could not be stopped: it still holds {nodes_text(job.placement)}"
    if failed:
        return None  # a start or hold that failed changed nothing the others count on
    if (job.running, job.placement) != (before.running, before.placement):
        was = nodes_text(before.placement) if before.running else "waiting"
        now = nodes_text(job.placement) if job.running else "waiting"
        return f"changed since the plan was made (was {was}, now {now})"
    return None


def back_in_queue(
    integration: Integration[Any, Any], jobs: set[str], wait: float, log: Any
) -> set[str]:
    """The jobs among `jobs` the integration has back in the queue, polled for at most `wait`
    seconds; all of them at once when its `stop` completes at once."""
    if not isinstance(integration, Restarts):
        return jobs
    deadline = time.monotonic() + wait
    back: set[str] = set()
    while True:
        try:
            back = integration.back_in_queue(jobs)
        except ReadError as exc:
            log.error("cannot_read", error=str(exc))
        if back >= jobs or time.monotonic() >= deadline:
            return back
        time.sleep(0.2)
