"""Schedule (Tiresias): at each decision the policy names every job that runs and its nodes;
a running job it leaves out is preempted.

Event-driven: decisions at arrivals, completions and whenever the last answer goes stale (a
queue demotion or promotion: `revisit_after`), and every N × round_seconds when configured. A
job kept on the same GPUs pays nothing; a job that stops pays its checkpoint-and-restore cost
(`preemption_seconds`) when it runs again (`Holdings`). A decider that answers without
placements (a baseline) has its running jobs kept where they are and the others placed first
fit, in its order. Each job runs at its throughput on the nodes it spans (the trace's slowdown
model, `simulator.traces.tiresias`).
"""

from __future__ import annotations

import numpy as np

from apportion.simulator.clients import Decider, PolicyError, Reply, Request
from apportion.simulator.config import SimConfig
from apportion.simulator.enact.common import (
    NodeEnactor,
    Placement,
    first_fit,
    running_from,
)
from apportion.simulator.enact.service import ServiceClock
from apportion.simulator.state import JobStates, Running, Step
from apportion.solver.arraytypes import IntArray


class ScheduleEnactor(NodeEnactor):
    def __init__(self, table: JobStates, decider: Decider, config: SimConfig) -> None:
        super().__init__(table, decider, config)
        self.clock = ServiceClock(table, config.options)

    def decide(self, now: float, solve: bool) -> Running:
        table = self.table
        if solve and table.n_active:
            active = table.active()
            self.clock.arrange(active)
            held = dict(self.placements)
            extra = self.config.snapshot_fields
            request = Request(
                table, active, now, lambda: self.clock.snapshot(active, now, held, extra)
            )
            answer = self.decider.decide(request)
            self.calls.add(now, int(active.size), answer)
            if answer.usable:
                self.placements = self._enacted(answer, active)
                self.clock.promote(answer)
            self.clock.settle(active, np.fromiter(self.placements, np.int64))
        types = {j: self._node_type[next(iter(p))] for j, p in self.placements.items()}
        enacted = self.holdings.enact(now, self.placements, types)
        return running_from(table, self.placements, enacted)

    def _enacted(self, answer: Reply, active: IntArray) -> dict[int, Placement]:
        """Every job the answer runs, where it says, where it was, or first fit."""
        table = self.table
        ids = {table.ids[j] for j in active.tolist()}
        runs = [job_id for job_id in answer.allocation if job_id in ids]
        placed: dict[int, Placement] = {}
        for job_id in runs:
            j = table.index[job_id]
            given = answer.placement.get(job_id)
            if given:
                placed[j] = dict(given)
            elif j in self.placements:
                placed[j] = self.placements[j]
        free = dict(self._gpus)
        for placement in placed.values():
            for node, gpus in placement.items():
                free[node] -= gpus
        if min(free.values(), default=0) < 0:
            raise PolicyError(f"{self.decider.name}: the answer places more GPUs than a node has")
        rest = np.array([table.index[i] for i in runs if table.index[i] not in placed], np.int64)
        placed.update(first_fit(table, answer.allocation, free, rest))
        return placed

    def after(self, step: Step, running: Running) -> None:
        self.clock.after(step, running)
        for j in step.finished.tolist():
            self.placements.pop(j, None)
        self.holdings.forget(step.finished)
