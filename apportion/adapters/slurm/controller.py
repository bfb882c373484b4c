"""The controller: every round, read Slurm, count time, solve, compute the round, enact it.

One round (`Controller.step`):

1. read the nodes and jobs (`sinfo --json`, `squeue --json`);
2. count the time each running job received since the last round (the ledger, saved atomically);
3. build the snapshot (`snapshot.build_view`) and ask the planner for the policy's allocation and
   the round (in process or over HTTP);
4. turn the round into `scontrol` commands (`plan.plan_round`) and run them, or print them with
   `--dry-run`.

Fail safe: when Slurm cannot be read, the solve fails or apportion cannot be reached, the round
changes nothing and says why; a command that fails stops that job's remaining commands (the
next round sees where it stands) and is logged. Nothing is ever cancelled. Every action is
logged, one JSON object per line.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import structlog

from apportion.adapters.slurm import ledger
from apportion.adapters.slurm.plan import Action, Kind, plan_round, render
from apportion.adapters.slurm.planner import Decision, PlanError, Planner
from apportion.adapters.slurm.slurmcli import Slurm, SlurmError
from apportion.adapters.slurm.snapshot import View, build_view
from apportion.mechanism import Round

log = structlog.get_logger("apportion.slurm")


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
    #: Seconds to wait for a moved job's requeue to complete before restarting it elsewhere
    #: (Slurm's KillWait bounds it, 30 s by default); longer, and the next round restarts it.
    requeue_wait: float = 30.0


@dataclass(frozen=True)
class Outcome:
    """What one round did: `error` says why it changed nothing (None when it was enacted);
    `failed` lists the commands Slurm refused."""

    number: int
    error: str | None = None
    actions: tuple[Action, ...] = ()
    failed: tuple[str, ...] = ()
    view: View | None = None
    decision: Decision | None = None
    round: Round | None = None

    def planned(self, kind: Kind) -> list[Action]:
        return [a for a in self.actions if a.kind == kind]


class Controller:
    """Runs rounds against one Slurm cluster with one planner."""

    def __init__(
        self,
        slurm: Slurm,
        planner: Planner,
        table: Mapping[str, Mapping[str, float]],
        settings: Settings,
        *,
        out: TextIO | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.slurm, self.planner, self.table, self.settings = slurm, planner, table, settings
        self.out = out or sys.stdout
        self.clock = clock
        self.ledger: ledger.Ledger | None = None
        self.number = 0
        self._warned: set[tuple[str, str]] = set()

    def step(self) -> Outcome:
        """One round, fail safe (see the module's docstring)."""
        self.number += 1
        try:
            nodes, jobs = self.slurm.nodes(), self.slurm.jobs()
        except SlurmError as exc:
            return self._unchanged(f"cannot read Slurm: {exc}")
        received = self._count(jobs)
        view = build_view(
            nodes, jobs, self.table, received, allow_preemption=self.settings.allow_preemption
        )
        self._warn(view)
        if not view.jobs:
            log.info("round", round=self.number, jobs=0, note="no job to schedule")
            return Outcome(self.number, view=view)
        try:
            decision = self.planner.decide(
                view.policy_snapshot(), self.settings.policy, self.settings.options
            )
            rnd = self._round(view, decision)
        except PlanError as exc:
            return self._unchanged(str(exc), view)
        except Exception as exc:  # a bug in one round must not end a controller that runs on
            log.exception("planning_failed", round=self.number)
            return self._unchanged(f"planning failed: {type(exc).__name__}: {exc}", view)
        actions = tuple(plan_round(view, rnd))
        if self.settings.dry_run:
            self.out.write(f"# round {self.number} (dry run: nothing is changed)\n")
            self.out.write(render(list(actions), view))
            self.out.flush()
            failed: tuple[str, ...] = ()
        else:
            failed = self._enact(actions)
        self._summary(actions, decision, failed)
        return Outcome(self.number, None, actions, failed, view, decision, rnd)

    def run(self, stop: threading.Event | None = None) -> int:
        """Rounds every `round_seconds` until `settings.rounds` are done or `stop` is set; 0
        when every round was enacted, 1 when some changed nothing because of a failure."""
        stop = stop or threading.Event()
        failures = 0
        while not stop.is_set():
            started = time.monotonic()
            failures += self.step().error is not None
            if self.settings.rounds is not None and self.number >= self.settings.rounds:
                break
            stop.wait(max(0.0, self.settings.round_seconds - (time.monotonic() - started)))
        return 1 if failures else 0

    def _count(self, jobs: list[Any]) -> dict[str, dict[str, float]]:
        """Bring the ledger to now (loading or rebuilding it on the first round) and save it
        (not in a dry run: that changes nothing, the state file included)."""
        now = self.clock()
        if self.ledger is None:
            loaded = ledger.load(self.settings.state, jobs, now)
            if loaded.problem is not None:
                log.warning(
                    "state_rebuilt", problem=loaded.problem, jobs=len(loaded.ledger.received)
                )
            current = loaded.ledger if loaded.problem else loaded.ledger.observe(jobs, now)
        else:
            current = self.ledger.observe(jobs, now)
        self.ledger = current
        if not self.settings.dry_run:
            try:
                ledger.save(self.settings.state, current)
            except OSError as exc:
                log.error("state_not_saved", state=str(self.settings.state), error=str(exc))
        return current.received

    def _round(self, view: View, decision: Decision) -> Round:
        snapshot = view.round_snapshot()
        ids = {job["id"] for job in snapshot["jobs"]}
        allocation = {j: per for j, per in decision.allocation.items() if j in ids}
        if not ids or not snapshot["nodes"]:  # everything fixed, or no GPU left to hand out
            idle = {k: 0 for k in view.gpu_types}
            return Round(assignments=(), idle=idle, waiting=tuple(sorted(ids)))
        return self.planner.next_round(
            snapshot,
            allocation,
            view.round_received(),
            view.previous(),
            rule=self.settings.rule,
            round_seconds=self.settings.round_seconds,
        )

    def _enact(self, actions: tuple[Action, ...]) -> tuple[str, ...]:
        """Run every action's commands, then (for moved jobs) the commands that must wait until
        the requeued job is back in the queue."""
        failed: list[str] = []
        done = [a for a in actions if self._run(a.job, a.kind, a.reason, a.commands, failed)]
        waiting = [a for a in done if a.then]
        if waiting:
            back = self._requeued({a.job for a in waiting})
            for action in waiting:
                if action.job in back:
                    self._run(action.job, action.kind, action.reason, action.then, failed)
                else:
                    why = "still completing after its requeue; the next round restarts it"
                    log.warning("restart_deferred", job=action.job, reason=why)
        return tuple(failed)

    def _run(
        self,
        job: str,
        kind: Kind,
        reason: str,
        commands: tuple[tuple[str, ...], ...],
        failed: list[str],
    ) -> bool:
        """Run one job's commands in order; False (and the rest skipped) at the first that
        Slurm refuses, as the later ones assume it worked."""
        for command in commands:
            shown = " ".join(command)
            try:
                self.slurm.run(command)
            except SlurmError as exc:
                log.error("command_failed", job=job, command=shown, error=str(exc))
                failed.append(shown)
                return False
            log.info("action", job=job, kind=str(kind), command=shown, reason=reason)
        return True

    def _requeued(self, jobs: set[str]) -> set[str]:
        """The jobs among `jobs` that Slurm lists as pending again, polled for at most
        `requeue_wait` seconds (a requeued job completes first: its processes are ended)."""
        deadline = time.monotonic() + self.settings.requeue_wait
        back: set[str] = set()
        while True:
            try:
                back = {j.id for j in self.slurm.jobs() if j.id in jobs and j.pending}
            except SlurmError as exc:
                log.error("cannot_read_slurm", error=str(exc))
            if back == jobs or time.monotonic() >= deadline:
                return back
            time.sleep(0.2)

    def _unchanged(self, why: str, view: View | None = None) -> Outcome:
        log.error("round_unchanged", round=self.number, reason=why, note="changed nothing")
        return Outcome(self.number, error=why, view=view)

    def _warn(self, view: View) -> None:
        """Each job the adapter leaves alone is named once per reason, not every round."""
        for job, why in view.skipped.items():
            if (job, why) not in self._warned:
                self._warned.add((job, why))
                log.warning("left_alone", job=job, reason=why)

    def _summary(
        self, actions: tuple[Action, ...], decision: Decision, failed: tuple[str, ...]
    ) -> None:
        counts: dict[str, int] = {}
        for action in actions:
            counts[str(action.kind)] = counts.get(str(action.kind), 0) + 1
        log.info(
            "round",
            round=self.number,
            policy=self.settings.policy,
            status=decision.status,
            dry_run=self.settings.dry_run,
            failed=len(failed),
            **counts,
        )
