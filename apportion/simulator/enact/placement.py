"""Placement (DeepShare): event-driven starts on nodes, with contention slowdown.

Decisions happen at events (arrivals, completions, and every N × round_seconds when configured),
not in rounds: when jobs wait and GPUs are free, the policy is asked which waiting jobs start and
on which nodes; running jobs keep their placement until they finish (never moved, so no
preemption cost). Every running job runs at its throughput divided by its contention
sensitivity under its current co-runners (`simulator.enact.contention`), recomputed at every
event, since a job starting or finishing next to it changes it. A decider without placements
(a baseline) gets its allocated waiting jobs placed first-fit in its priority order.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from apportion.simulator.clients import Answer, Decider, Request
from apportion.simulator.config import SimConfig
from apportion.simulator.enact.common import (
    CallLog,
    Holdings,
    Placement,
    first_fit,
    node_types,
    running_from,
)
from apportion.simulator.enact.contention import Slowdown
from apportion.simulator.snapshots import placement_snapshot
from apportion.simulator.state import JobTable, Running, Step


class PlacementEnactor:
    def __init__(self, table: JobTable, decider: Decider, config: SimConfig) -> None:
        self.table, self.decider, self.config = table, decider, config
        self.calls = CallLog()
        self.holdings = Holdings(table, config.preemption_seconds)
        self.placements: dict[int, Placement] = {}
        self._node_type = node_types(table)
        self._gpus = {n.id: n.gpus for n in table.trace.cluster.nodes}
        contention = table.trace.contention
        self._contention: dict[str, Any] | None = None
        self._slowdown: Slowdown | None = None
        if contention is not None:
            self._contention = contention.model_dump()
            self._slowdown = Slowdown(table, contention)

    def length(self, now: float) -> float:
        every = self.config.resolve_for(self.decider.baseline).every
        return now + every * self.config.round_seconds if every else np.inf

    def decide(self, now: float, solve: bool) -> Running:
        table = self.table
        active = table.active()
        waiting = [j for j in active.tolist() if j not in self.placements]
        if solve and waiting and self._free_gpus() > 0:
            held = dict(self.placements)
            request = Request(
                table,
                active,
                now,
                lambda: placement_snapshot(table, active, held, self._contention),
            )
            answer = self.decider.decide(request)
            self.calls.add(now, int(active.size), answer)
            if answer.usable:
                self.placements.update(self._started(answer, waiting))
        types = {j: self._node_type[next(iter(p))] for j, p in self.placements.items()}
        self.holdings.enact(now, self.placements, types)
        slowdown = self._slowdown(self.placements) if self._slowdown is not None else None
        return running_from(table, self.placements, types, slowdown)

    def _free_gpus(self) -> int:
        return sum(self._gpus.values()) - sum(sum(p.values()) for p in self.placements.values())

    def _started(self, answer: Answer, waiting: list[int]) -> dict[int, Placement]:
        table = self.table
        waiting_ids = {table.ids[j] for j in waiting}
        started = {
            table.index[job_id]: dict(p)
            for job_id, p in answer.placement.items()
            if job_id in waiting_ids
        }
        if started or not answer.allocation:
            return started
        free = dict(self._gpus)
        for placement in self.placements.values():
            for node, gpus in placement.items():
                free[node] -= gpus
        order = np.array(
            [table.index[i] for i in answer.allocation if i in waiting_ids], dtype=np.int64
        )
        return first_fit(table, answer.allocation, free, order)

    def after(self, step: Step, running: Running) -> None:
        for j in step.finished.tolist():
            self.placements.pop(j, None)
