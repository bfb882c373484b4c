"""The shared controller: every round, read the scheduler, count time, solve, compute the
round, enact it; the same fail-safe rules for every integration.

One round (`Controller.step`):

1. read the scheduler (`Integration.read`), the jobs it lists (`seen`) and what is managed;
2. count the time each running job received since the last round (the ledger, saved);
3. build the view (`View.build`), ask the planner for the policy's allocation and the round;
4. turn the round into actions (`actions.plan_round`) and enact their commands, or print them
   with `dry_run`.

Fail safe: when the scheduler cannot be read, the solve fails, apportion cannot be reached or
planning fails in any other way, the round changes nothing and says why; a command that fails
stops that job's remaining commands (the next round sees where it stands) and is logged. After
a command that failed or was slow (`slow_command`: a scheduler restarting answers late), the
scheduler is read again and the rest of the plan is run only if it still holds (`stale`);
otherwise it is abandoned (`plan_abandoned`) and the next round plans afresh. There is no
cancel verb: a job the round does not run is stopped back into the queue (`Integration.stop`).
Every command is logged with its reason, one JSON object per line.

Before the first round (`check`): no run on an unusable state file (`ledger.StateError`, unless
`rebuild_state`); the one-instance lock (`lock`) taken, held until `close`. A job someone else
holds stays held (`holds`).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TextIO, TypeVar

import structlog

from apportion.adapters.framework import ledger
from apportion.adapters.framework.actions import Action, Kind, plan_round, render
from apportion.adapters.framework.holds import held_after, placing, releasing, sort_holds
from apportion.adapters.framework.integration import (
    Checked,
    Closes,
    Commands,
    Identified,
    Integration,
    ReadError,
    Seen,
)
from apportion.adapters.framework.learning import Reports, learn_round
from apportion.adapters.framework.lock import InstanceLock, claim
from apportion.adapters.framework.planner import Decision, PlanError, RoundPlanner
from apportion.adapters.framework.stale import back_in_queue, recheck
from apportion.adapters.framework.view import Job, Managed, View
from apportion.mechanism import Round

S = TypeVar("S")
J = TypeVar("J")


@dataclass(frozen=True)
class Settings:
    """How the controller runs (the command line's options)."""

    state: Path
    policy: str = "max_min_fairness"
    options: Mapping[str, Any] = field(default_factory=dict)
    round_seconds: float = 360.0
    rounds: int | None = None
    #: The round's serving rule (`mechanism.Rule`): `gavel`, or `deficit` (each job within a
    #: round of its share on one GPU type; it is given `round_seconds` as the round's length).
    rule: str = "gavel"
    allow_preemption: bool = False
    dry_run: bool = False
    #: Seconds to wait for a moved job to be back in the queue before starting it elsewhere
    #: (`Restarts`; Slurm's KillWait bounds it, 30 s by default); longer, and the next round
    #: starts it.
    requeue_wait: float = 30.0
    #: Rebuild an unusable state file from the running jobs instead of refusing to run.
    rebuild_state: bool = False
    #: A command slower than this (seconds) makes the controller re-read the scheduler before
    #: it goes on with the round (as a failed command does).
    slow_command: float = 5.0
    #: Where the one-instance lock of a cluster and scope lives (None: `lock.lock_dir()`).
    lock_dir: Path | None = None


@dataclass(frozen=True)
class RoundReport(Generic[J]):
    """What one round did: `error` says why it changed nothing (None when it was enacted);
    `failed` lists the commands the scheduler refused; `abandoned` why the rest of the plan
    was not run (the view it was made on no longer held)."""

    number: int
    error: str | None = None
    actions: tuple[Action, ...] = ()
    failed: tuple[str, ...] = ()
    view: View[J] | None = None
    decision: Decision | None = None
    round: Round | None = None
    abandoned: str | None = None

    def planned(self, kind: Kind) -> list[Action]:
        return [a for a in self.actions if a.kind == kind]


class Controller(Generic[S, J]):
    """Runs rounds against one scheduler (through its integration) with one planner."""

    def __init__(
        self,
        integration: Integration[S, J],
        planner: RoundPlanner,
        settings: Settings,
        *,
        out: TextIO | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.integration, self.planner, self.settings = integration, planner, settings
        self.out = out or sys.stdout
        self.clock = clock
        self.ledger: ledger.Ledger | None = None
        self.number = 0
        self.log = structlog.get_logger(f"apportion.{integration.name}")
        self._warned: set[tuple[str, str]] = set()
        self.lock: InstanceLock | None = None

    def check(self) -> None:
        """Before the first round: `SetupError` when the integration cannot run here,
        `StateError` when the state file is unusable, `LockError` when another instance
        manages the same jobs (the lock is then held until `close`; not for a dry run)."""
        if isinstance(self.integration, Checked):
            self.integration.check()
        if self.settings.dry_run:
            return
        if not self.settings.rebuild_state:
            ledger.check(self.settings.state)
        if self.lock is None:
            named = self.integration if isinstance(self.integration, Identified) else None
            identity = named.identity() if named is not None else None
            self.lock = claim(self.settings.state, identity, self.settings.lock_dir)

    def step(self) -> RoundReport[J]:
        """One round, fail safe (see the module's docstring)."""
        self.number += 1
        name = self.integration.name
        try:
            state = self.integration.read()
            seen = list(self.integration.seen(state))
            managed = self.integration.managed(state)
        except ReadError as exc:
            return self._unchanged(f"cannot read {name}: {exc}")
        except Exception as exc:  # a bug in one round must not end a controller that runs on
            self.log.exception("reading_failed", round=self.number)
            return self._unchanged(f"reading {name} failed: {type(exc).__name__}: {exc}")
        received, others = self._count(seen, managed.jobs)
        managed = self._learn(managed, {s.id for s in seen}, received)
        view = View.build(
            managed, received, allow_preemption=self.settings.allow_preemption, held=others
        )
        self._warn(view)
        if not (view.jobs or view.faulty or view.held):
            self.log.info("round", round=self.number, jobs=0, note="no job to schedule")
            return RoundReport(self.number, view=view)
        try:
            decision = self._decide(view)
            rnd = self._round(view, decision)
            actions = tuple(plan_round(self.integration, view, rnd))
        except PlanError as exc:
            return self._unchanged(str(exc), view)
        except Exception as exc:
            self.log.exception("planning_failed", round=self.number)
            return self._unchanged(f"planning failed: {type(exc).__name__}: {exc}", view)
        failed, abandoned = self._enact(view, actions) if not self.settings.dry_run else ((), None)
        if self.settings.dry_run:
            self.out.write(f"# round {self.number} (dry run: nothing is changed)\n")
            self.out.write(render(self.integration, list(actions), view))
            self.out.flush()
        report = RoundReport(self.number, None, actions, failed, view, decision, rnd, abandoned)
        self._summary(report)
        return report

    def run(self, stop: threading.Event | None = None) -> int:
        """Rounds every `round_seconds` until `settings.rounds` are done or `stop` is set; 0
        when every round was enacted, 1 when some changed nothing because of a failure."""
        stop = stop or threading.Event()
        failures = 0
        try:
            while not stop.is_set():
                started = time.monotonic()
                outcome = self.step()
                failures += outcome.error is not None or outcome.abandoned is not None
                if self.settings.rounds is not None and self.number >= self.settings.rounds:
                    break
                stop.wait(max(0.0, self.settings.round_seconds - (time.monotonic() - started)))
        finally:
            self.close()
        return 1 if failures else 0

    def close(self) -> None:
        for part in (self.integration, self.planner):
            if isinstance(part, Closes):
                part.close()
        if self.lock is not None:
            self.lock.release()
            self.lock = None

    def _count(
        self, seen: Iterable[Seen], jobs: list[Job[J]]
    ) -> tuple[dict[str, dict[str, float]], dict[str, str]]:
        """Bring the ledger to now (loading it on the first round: `StateError` when the file
        is unusable, unless `rebuild_state`), sort the holds, save it (not in a dry run: that
        changes nothing, the state file included); the seconds received and the jobs held
        by someone else."""
        now, seen = self.clock(), list(seen)
        if self.ledger is None:
            loaded = ledger.load(self.settings.state, seen, now)
            if loaded.fatal and not self.settings.rebuild_state:
                assert loaded.problem is not None
                raise ledger.StateError(ledger.refusal(self.settings.state, loaded.problem))
            if loaded.problem is not None:
                self.log.warning(
                    "state_rebuilt", problem=loaded.problem, jobs=len(loaded.ledger.received)
                )
            # Rebuilt, nothing is known: every held job is taken as held for the adapter.
            book = loaded.ledger if loaded.problem is None else ledger.Ledger(now)
            current = loaded.ledger if loaded.problem else loaded.ledger.observe(seen, now)
        else:
            book, current = self.ledger, self.ledger.observe(seen, now)
        others, mine = sort_holds(jobs, book)
        self._save(current.with_holds(mine))
        return current.received, others

    def _learn(
        self, managed: Managed[J], listed: set[str], received: dict[str, dict[str, float]]
    ) -> Managed[J]:
        """The managed jobs with the rows their reported progress taught (`learning`)."""
        if not isinstance(self.integration, Reports) or self.ledger is None:
            return managed
        client, book = self.planner.client, self.ledger
        managed, kept = learn_round(client, self.integration, managed, listed, received, book)
        if kept is not None:
            self._save(kept)
        return managed

    def _save(self, current: ledger.Ledger) -> None:
        self.ledger = current
        if not self.settings.dry_run:
            try:
                ledger.save(self.settings.state, current)
            except OSError as exc:
                self.log.error("state_not_saved", state=str(self.settings.state), error=str(exc))

    def _book(
        self, change: Callable[[dict[str, str], set[str]], dict[str, str]], jobs: set[str]
    ) -> None:
        assert self.ledger is not None
        self._save(self.ledger.with_holds(change(self.ledger.holds, jobs)))

    def _decide(self, view: View[J]) -> Decision | None:
        if not view.jobs:  # only requeues and holds to report
            return None
        return self.planner.decide(
            view.policy_snapshot(), self.settings.policy, self.settings.options
        )

    def _round(self, view: View[J], decision: Decision | None) -> Round:
        snapshot = view.round_snapshot()
        ids = {job["id"] for job in snapshot["jobs"]}
        if decision is None or not ids or not snapshot["nodes"]:  # all fixed, or no GPU free
            idle = {k: 0 for k in view.gpu_types}
            return Round(assignments=(), idle=idle, waiting=tuple(sorted(ids)))
        # The answer's columns as they are: the round reads only the jobs it lists.
        return self.planner.next_round(
            snapshot,
            decision.allocation,
            view.round_received(),
            view.previous(),
            rule=self.settings.rule,
            round_seconds=self.settings.round_seconds,
        )

    def _enact(
        self, view: View[J], actions: tuple[Action, ...]
    ) -> tuple[tuple[str, ...], str | None]:
        """Run every action's commands, then (for moved jobs) the commands that must wait until
        the stopped job is back in the queue; after a failed or slow command, go on only while
        the plan still holds. The holds the round places are booked first, its releases once
        they went through. The refused commands, and why the plan was abandoned (or None)."""
        self._book(placing, held_after(view, actions))
        failed: list[str] = []
        done: set[str] = set()
        broke: set[str] = set()
        abandoned, _ = self._each(view, actions, actions, "commands", failed, done, broke)
        waiting = [a for a in actions if a.then and a.job in done] if abandoned is None else []
        jobs, wait = {a.job for a in waiting}, self.settings.requeue_wait
        back = back_in_queue(self.integration, jobs, wait, self.log) if waiting else set()
        for action in waiting:
            if action.job not in back:
                why = "still stopping after its requeue; the next round restarts it"
                self.log.warning("restart_deferred", job=action.job, reason=why)
        moved: set[str] = set()
        ready = tuple(a for a in waiting if a.job in back)
        if abandoned is None:
            abandoned, moved = self._each(view, actions, ready, "then", failed, done, broke)
        starts = {a.job for a in actions if a.kind == Kind.START and a.job in done}
        self._book(releasing, starts | moved)
        return tuple(failed), abandoned

    def _each(
        self,
        view: View[J],
        plan: tuple[Action, ...],
        actions: tuple[Action, ...],
        part: str,
        failed: list[str],
        done: set[str],
        broke: set[str],
    ) -> tuple[str | None, set[str]]:
        """Run `part` (`commands` or `then`) of each action in turn; why the rest of the plan
        was abandoned (or None), and the jobs whose part all ran."""
        ran: set[str] = set()

        def check() -> str | None:
            done.update(ran)
            return recheck(self.integration, view, plan, done, broke)

        for number, action in enumerate(actions):
            why = self._run(action, getattr(action, part), failed, ran, broke, check)
            done.update(ran)
            if why is not None:
                left = [a.job for a in actions[number + 1 :] if getattr(a, part)]
                self.log.error("plan_abandoned", round=self.number, reason=why, not_run=left)
                return why, ran
        return None, ran

    def _run(
        self,
        action: Action,
        commands: Commands,
        failed: list[str],
        ran: set[str],
        broke: set[str],
        check: Callable[[], str | None],
    ) -> str | None:
        """Run one job's commands in order (the job then joins `ran`); at the first that
        fails, the rest are skipped (the later ones assume it worked; it joins `broke`). After
        a failed or slow command, `check` the plan still holds: why it does not, or None."""
        for number, command in enumerate(commands):
            shown = self.integration.show(command)
            began = time.monotonic()
            try:
                self.integration.enact(command)
            except Exception as exc:  # EnactError, or a bug: either way this job stops here
                self.log.error("command_failed", job=action.job, command=shown, error=str(exc))
                failed.append(shown)
                broke.add(action.job)
                return check()
            kind = str(action.kind)
            self.log.info("action", job=action.job, kind=kind, command=shown, reason=action.reason)
            took = time.monotonic() - began
            if number == len(commands) - 1:
                ran.add(action.job)
            if took > self.settings.slow_command:
                self.log.warning("command_slow", job=action.job, command=shown, seconds=took)
                why = check()  # before this job's next command too
                if why is not None:
                    return why
        ran.add(action.job)  # (no command at all)
        return None

    def _unchanged(self, why: str, view: View[J] | None = None) -> RoundReport[J]:
        self.log.error("round_unchanged", round=self.number, reason=why, note="changed nothing")
        return RoundReport(self.number, error=why, view=view)

    def _warn(self, view: View[J]) -> None:
        """Each job left alone is named once per reason, not every round."""
        for job, why in view.skipped.items():
            if (job, why) not in self._warned:
                self._warned.add((job, why))
                self.log.warning("left_alone", job=job, reason=why)

    def _summary(self, report: RoundReport[J]) -> None:
        counts: dict[str, int] = {}
        for action in report.actions:
            counts[str(action.kind)] = counts.get(str(action.kind), 0) + 1
        decision, failed, abandoned = report.decision, report.failed, report.abandoned
        self.log.info(
            "round",
            round=self.number,
            policy=self.settings.policy,
            status=decision.status if decision is not None else "-",
            dry_run=self.settings.dry_run,
            failed=len(failed),
            abandoned=abandoned,
            **counts,
        )
