"""The shared controller: every round, read the scheduler, count time, solve, compute the
round, enact it; the same fail-safe rules for every integration.

One round (`Controller.step`):

1. read the scheduler (`Integration.read`), the jobs it lists (`seen`) and what is managed;
2. count the time each running job received since the last round (the ledger, saved
   atomically);
3. build the view (`View.build`) and ask the planner for the policy's allocation and the round
   (in process or over HTTP);
4. turn the round into actions (`actions.plan_round`) and enact their commands, or print them
   with `dry_run`.

Fail safe: when the scheduler cannot be read, the solve fails, apportion cannot be reached or
planning fails in any other way, the round changes nothing and says why; a command that fails
stops that job's remaining commands (the next round sees where it stands) and is logged, and
the other jobs' commands still run. There is no cancel verb: a job the round does not run is
stopped back into the queue (`Integration.stop`). Every command is logged with its reason, one
JSON object per line.
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
from apportion.adapters.framework.integration import (
    Checked,
    Closes,
    Commands,
    Integration,
    ReadError,
    Restarts,
    Seen,
)
from apportion.adapters.framework.planner import Decision, PlanError, RoundPlanner
from apportion.adapters.framework.view import View
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


@dataclass(frozen=True)
class RoundReport(Generic[J]):
    """What one round did: `error` says why it changed nothing (None when it was enacted);
    `failed` lists the commands the scheduler refused."""

    number: int
    error: str | None = None
    actions: tuple[Action, ...] = ()
    failed: tuple[str, ...] = ()
    view: View[J] | None = None
    decision: Decision | None = None
    round: Round | None = None

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

    def check(self) -> None:
        """Before the first round: `SetupError` when the integration cannot run here."""
        if isinstance(self.integration, Checked):
            self.integration.check()

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
        received = self._count(seen)
        view = View.build(managed, received, allow_preemption=self.settings.allow_preemption)
        self._warn(view)
        if not view.jobs:
            self.log.info("round", round=self.number, jobs=0, note="no job to schedule")
            return RoundReport(self.number, view=view)
        try:
            decision = self.planner.decide(
                view.policy_snapshot(), self.settings.policy, self.settings.options
            )
            rnd = self._round(view, decision)
            actions = tuple(plan_round(self.integration, view, rnd))
        except PlanError as exc:
            return self._unchanged(str(exc), view)
        except Exception as exc:
            self.log.exception("planning_failed", round=self.number)
            return self._unchanged(f"planning failed: {type(exc).__name__}: {exc}", view)
        if self.settings.dry_run:
            self.out.write(f"# round {self.number} (dry run: nothing is changed)\n")
            self.out.write(render(self.integration, list(actions), view))
            self.out.flush()
            failed: tuple[str, ...] = ()
        else:
            failed = self._enact(actions)
        self._summary(actions, decision, failed)
        return RoundReport(self.number, None, actions, failed, view, decision, rnd)

    def run(self, stop: threading.Event | None = None) -> int:
        """Rounds every `round_seconds` until `settings.rounds` are done or `stop` is set; 0
        when every round was enacted, 1 when some changed nothing because of a failure."""
        stop = stop or threading.Event()
        failures = 0
        try:
            while not stop.is_set():
                started = time.monotonic()
                failures += self.step().error is not None
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

    def _count(self, seen: Iterable[Seen]) -> dict[str, dict[str, float]]:
        """Bring the ledger to now (loading or rebuilding it on the first round) and save it
        (not in a dry run: that changes nothing, the state file included)."""
        now = self.clock()
        if self.ledger is None:
            loaded = ledger.load(self.settings.state, seen, now)
            if loaded.problem is not None:
                self.log.warning(
                    "state_rebuilt", problem=loaded.problem, jobs=len(loaded.ledger.received)
                )
            current = loaded.ledger if loaded.problem else loaded.ledger.observe(seen, now)
        else:
            current = self.ledger.observe(seen, now)
        self.ledger = current
        if not self.settings.dry_run:
            try:
                ledger.save(self.settings.state, current)
            except OSError as exc:
                self.log.error("state_not_saved", state=str(self.settings.state), error=str(exc))
        return current.received

    def _round(self, view: View[J], decision: Decision) -> Round:
        snapshot = view.round_snapshot()
        ids = {job["id"] for job in snapshot["jobs"]}
        if not ids or not snapshot["nodes"]:  # everything fixed, or no GPU left to hand out
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

    def _enact(self, actions: tuple[Action, ...]) -> tuple[str, ...]:
        """Run every action's commands, then (for moved jobs) the commands that must wait until
        the stopped job is back in the queue."""
        failed: list[str] = []
        done = [a for a in actions if self._run(a, a.commands, failed)]
        waiting = [a for a in done if a.then]
        back = self._back_in_queue({a.job for a in waiting}) if waiting else set()
        for action in waiting:
            if action.job in back:
                self._run(action, action.then, failed)
            else:
                why = "still stopping after its requeue; the next round restarts it"
                self.log.warning("restart_deferred", job=action.job, reason=why)
        return tuple(failed)

    def _run(self, action: Action, commands: Commands, failed: list[str]) -> bool:
        """Run one job's commands in order; False (and the rest skipped) at the first that
        fails, as the later ones assume it worked."""
        for command in commands:
            shown = self.integration.show(command)
            try:
                self.integration.enact(command)
            except Exception as exc:  # EnactError, or a bug: either way this job stops here
                self.log.error("command_failed", job=action.job, command=shown, error=str(exc))
                failed.append(shown)
                return False
            kind = str(action.kind)
            self.log.info("action", job=action.job, kind=kind, command=shown, reason=action.reason)
        return True

    def _back_in_queue(self, jobs: set[str]) -> set[str]:
        """The jobs among `jobs` the integration has back in the queue, polled for at most
        `requeue_wait` seconds; all of them at once when its `stop` completes at once."""
        if not isinstance(self.integration, Restarts):
            return jobs
        deadline = time.monotonic() + self.settings.requeue_wait
        back: set[str] = set()
        while True:
            try:
                back = self.integration.back_in_queue(jobs)
            except ReadError as exc:
                self.log.error("cannot_read", error=str(exc))
            if back >= jobs or time.monotonic() >= deadline:
                return back
            time.sleep(0.2)

    def _unchanged(self, why: str, view: View[J] | None = None) -> RoundReport[J]:
        self.log.error("round_unchanged", round=self.number, reason=why, note="changed nothing")
        return RoundReport(self.number, error=why, view=view)

    def _warn(self, view: View[J]) -> None:
        """Each job left alone is named once per reason, not every round."""
        for job, why in view.skipped.items():
            if (job, why) not in self._warned:
                self._warned.add((job, why))
                self.log.warning("left_alone", job=job, reason=why)

    def _summary(
        self, actions: tuple[Action, ...], decision: Decision, failed: tuple[str, ...]
    ) -> None:
        counts: dict[str, int] = {}
        for action in actions:
            counts[str(action.kind)] = counts.get(str(action.kind), 0) + 1
        self.log.info(
            "round",
            round=self.number,
            policy=self.settings.policy,
            status=decision.status,
            dry_run=self.settings.dry_run,
            failed=len(failed),
            **counts,
        )
