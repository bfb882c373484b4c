"""Leases (Chronus): deadline admission asked at every lease boundary, or more often.

Leases lie on one fixed grid of `lease_seconds` (from the first decision, restarted only when
no active job holds GPUs or a guarantee). The policy is asked at every boundary, or every
`call_seconds` in between (a caller that admits every few minutes). Each call it gets the active
jobs with their remaining time at full speed, deadlines, `guaranteed: true` for every job an
earlier answer guaranteed (so guarantees carry over), the grid's phase (`lease_start`), and for
a job started earlier in the current lease its `placement` and `held_until` (the lease's end;
its remaining time includes any restore cost still to pay). The jobs it says run now run on the
placements it returns until the end of the current lease; a holder keeps its GPUs. A job whose
guarantee is broken loses the flag and is marked in `JobTable.broken` (the records'
`guarantee_broken`). Jobs arriving between calls wait for the next; GPUs freed between calls
stay idle until then (`simulator.engine` sets the policy's `overhead_seconds` to the preemption
cost unless given). A decider without placements (a baseline) gets its allocated jobs placed
first-fit on the nodes.
"""

from __future__ import annotations

import math

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
from apportion.simulator.snapshots import Held, lease_snapshot
from apportion.simulator.state import EPS, JobTable, Running, Step


class LeaseEnactor:
    def __init__(
        self,
        table: JobTable,
        decider: Decider,
        config: SimConfig,
    ) -> None:
        self.table, self.decider, self.config = table, decider, config
        self.call_seconds = config.call_seconds or config.lease_seconds
        self.calls = CallLog()
        self.holdings = Holdings(table, config.preemption_seconds)
        self.until: dict[int, float] = {}  # job → end of the lease it holds GPUs in
        self.origin: float | None = None
        self.start = 0.0  # the current lease's start
        self._node_type = node_types(table)
        contention = table.trace.contention
        self._slowdown = Slowdown(table, contention) if contention is not None else None

    def length(self, now: float) -> float:
        return min(now + self.call_seconds, self.start + self.config.lease_seconds)

    def decide(self, now: float, solve: bool) -> Running:
        # Every call is a decision: admission must see the jobs' progress each time.
        table = self.table
        active = table.active()
        lease = self.config.lease_seconds
        self.start = self._lease_start(now, active)
        held = self._held(now, active)
        request = Request(
            table, active, now, lambda: lease_snapshot(table, active, now, lease, self.start, held)
        )
        answer: Answer = self.decider.decide(request)
        self.calls.add(now, int(active.size), answer)
        placements = self._placements(answer, request) if answer.usable else {}
        types = {j: self._node_type[next(iter(p))] for j, p in placements.items()}
        self.holdings.enact(now, placements, types)
        end = self.start + lease
        self.until = {j: self.until[j] if j in held else end for j in placements}
        slowdown = self._slowdown(placements) if self._slowdown is not None else None
        return running_from(table, placements, types, slowdown)

    def _lease_start(self, now: float, active: np.ndarray) -> float:
        """The grid's current lease; a new grid when nothing rides on the old one."""
        busy = bool(self.table.guaranteed[active].any()) or any(
            t > now + EPS for t in self.until.values()
        )
        if self.origin is None or not busy:
            self.origin = now
        lease = self.config.lease_seconds
        start = self.origin + lease * math.floor((now - self.origin) / lease + 1e-9)
        # The tolerance that puts a call a hair before a boundary on it must not put the
        # lease's start after the call (a snapshot refuses a lease that starts later).
        return min(start, now)

    def _held(self, now: float, active: np.ndarray) -> dict[int, Held]:
        previous = self.holdings.previous
        return {
            j: Held(previous[j], self.until[j])
            for j in active.tolist()
            if j in previous and self.until.get(j, now) > now + EPS
        }

    def _placements(self, answer: Answer, request: Request) -> dict[int, Placement]:
        table = self.table
        for job_id, metrics in answer.metrics.items():
            if metrics.get("guaranteed") is not None:
                j = table.index[job_id]
                # A guarantee given earlier and withdrawn now is broken, whatever the answer
                # calls it (and a broken one stays counted if the job is admitted again).
                table.broken[j] |= bool(table.guaranteed[j]) and not metrics["guaranteed"]
                table.guaranteed[j] = bool(metrics["guaranteed"])
        runs = {
            table.index[job_id]: dict(p)
            for job_id, p in answer.placement.items()
            if answer.metrics.get(job_id, {}).get("runs_now", True)
        }
        if runs or not answer.allocation:
            return runs
        free = {n.id: n.gpus for n in table.trace.cluster.nodes}
        order = np.array(
            [table.index[i] for i in answer.allocation if i in table.index], dtype=np.int64
        )
        return first_fit(table, answer.allocation, free, order)

    def after(self, step: Step, running: Running) -> None:
        self.holdings.forget(step.finished)
        for j in step.finished.tolist():
            self.until.pop(j, None)
