"""Placement (DeepShare): event-driven decisions on nodes, with contention slowdown.

Decisions happen at events (arrivals, completions, and every N × round_seconds when configured),
not in rounds. At each the policy is asked where every job should run: an answer's placements
are the whole new state, so a running job it places elsewhere moves and one it leaves out is
preempted (each pays `preemption_seconds` when it next runs, as in rounds mode); a policy that
never moves running jobs simply places them where they are. Every running job runs at its
throughput for its spread divided by its contention sensitivity under its current co-runners
(`simulator.enact.contention`, either model of `SimConfig.contention`).

A decider that ranks jobs instead of placing them (a baseline) has them placed in its order:
under the trace's placement rules by `simulator.enact.rules` (its `placement` option), else
first-fit as before (running jobs keep their nodes). A trace's rules also bind policies: a
placement policy is told the shapes they allow, and an answer that breaks them stops the run.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from apportion.simulator.clients import Decider, Reply, Request
from apportion.simulator.config import Contention, SimConfig
from apportion.simulator.enact.common import (
    NodeEnactor,
    Placement,
    first_fit,
    running_from,
)
from apportion.simulator.enact.contention import Slowdown
from apportion.simulator.enact.rules import STYLES, check_placements, place_ranked
from apportion.simulator.snapshots import placement_snapshot
from apportion.simulator.state import JobStates, Running, Step
from apportion.solver.snapshot.contention import ContentionTable


class PlacementEnactor(NodeEnactor):
    def __init__(self, table: JobStates, decider: Decider, config: SimConfig) -> None:
        super().__init__(table, decider, config)
        self._rules = table.trace.rules
        # A baseline is called with the configuration's options as they are (`policy_options`).
        self._style = str(config.options.get("placement", "reference"))
        if decider.baseline and self._style not in STYLES:
            raise ValueError(f"placement: unknown style {self._style!r}; use one of {STYLES}")
        contention = table.trace.contention
        self._contention: dict[str, Any] | None = None
        self._slowdown: Slowdown | None = None
        self._validated: dict[str, Any] = {}
        if contention is not None:
            self._contention = contention.model_dump()
            persist = config.contention == Contention.REFERENCE
            self._slowdown = Slowdown(table, contention, persist)
            self._validated = {"contention": checked(contention, table.trace.name)}

    def decide(self, now: float, solve: bool) -> Running:
        table = self.table
        active = table.active()
        waiting = [j for j in active.tolist() if j not in self.placements]
        placed: set[int] = set()
        if solve and active.size and (waiting or not self.decider.baseline):
            held = dict(self.placements)
            request = Request(
                table,
                active,
                now,
                lambda: placement_snapshot(table, active, held, self._contention, now),
                validated=self._validated,
            )
            answer = self.decider.decide(request)
            self.calls.add(now, int(active.size), answer)
            if answer.usable:
                chosen = self._chosen(answer, active.tolist())
                # DeepShare re-places a baseline's jobs every round; a policy's kept jobs stay.
                placed = set(chosen) if self.decider.baseline else _changed(held, chosen)
                self.placements = chosen
        types = {j: self._node_type[next(iter(p))] for j, p in self.placements.items()}
        enacted = self.holdings.enact(now, self.placements, types)
        slowdown = None
        if self._slowdown is not None:
            slowdown = self._slowdown(self.placements, placed)
        return running_from(table, self.placements, enacted, slowdown)

    def _chosen(self, answer: Reply, active: list[int]) -> dict[int, Placement]:
        """The placements after this answer: every active job it places, where it places it."""
        table = self.table
        ranked = answer.order or (list(answer.allocation) if not answer.placement else [])
        if ranked:
            order = [table.index[i] for i in ranked]
            if self._rules is not None:
                return place_ranked(table, order, self.placements, self._rules, self._style)
            return self._first_fit(answer, order)
        alive = {table.ids[j] for j in active}
        chosen = {
            table.index[job_id]: dict(p)
            for job_id, p in answer.placement.items()
            if job_id in alive
        }
        if self._rules is not None:
            check_placements(table, self._rules, chosen, self.decider.name)
        return chosen

    def _first_fit(self, answer: Reply, order: list[int]) -> dict[int, Placement]:
        """Running jobs keep their nodes; the allocated waiting ones, in `order`, go first-fit."""
        kept = {j: p for j, p in self.placements.items() if self.table.ids[j] in answer.allocation}
        free = dict(self._gpus)
        for placement in kept.values():
            for node, gpus in placement.items():
                free[node] -= gpus
        waiting = np.array([j for j in order if j not in kept], dtype=np.int64)
        return {**kept, **first_fit(self.table, answer.allocation, free, waiting)}

    def after(self, step: Step, running: Running) -> None:
        for j in step.finished.tolist():
            self.placements.pop(j, None)


def checked(contention: ContentionTable, trace: str) -> ContentionTable:
    """The trace's contention table, after the snapshot's own checks on it (done once here:
    every call's snapshot then takes it as it is)."""
    from apportion.solver.snapshot.checks.contention import contention_errors

    errors = contention_errors(contention)
    if errors:
        raise ValueError(f"trace {trace!r}: contention table: {errors[0].msg}")
    return contention


def _changed(before: dict[int, Placement], after: dict[int, Placement]) -> set[int]:
    """Jobs placed anew: started, restarted or moved."""
    return {j for j, p in after.items() if before.get(j) != p}
