"""Leases (Chronus): deadline admission asked at every lease boundary.

Each lease the policy gets the active jobs with their remaining time at full speed, deadlines,
and `guaranteed: true` for every job an earlier answer guaranteed (so guarantees carry over);
the jobs it says run now run on the placements it returns for one lease. A job whose guarantee
is broken loses the flag. Jobs arriving mid-lease wait for the next lease; GPUs freed mid-lease
stay idle until then (`simulator.engine` sets the policy's `overhead_seconds` to the preemption
cost unless given). A decider without placements (a baseline) gets its allocated jobs placed
first-fit on the nodes.
"""

from __future__ import annotations

import numpy as np

from simulator.clients import Answer, Decider, Request
from simulator.config import SimConfig
from simulator.enact.common import CallLog, Holdings, Placement, first_fit, node_types, running_from
from simulator.enact.contention import Slowdown
from simulator.snapshots import lease_snapshot
from simulator.state import JobTable, Running, Step


class LeaseEnactor:
    def __init__(self, table: JobTable, decider: Decider, config: SimConfig) -> None:
        self.table, self.decider, self.config = table, decider, config
        self.calls = CallLog()
        self.holdings = Holdings(table, config.preemption_seconds)
        self._node_type = node_types(table)
        contention = table.trace.contention
        self._slowdown = Slowdown(table, contention) if contention is not None else None

    def length(self, now: float) -> float:
        return now + self.config.lease_seconds

    def decide(self, now: float, solve: bool) -> Running:
        # Every lease is a decision: admission must see the jobs' progress each time.
        table = self.table
        active = table.active()
        lease = self.config.lease_seconds
        request = Request(table, active, now, lambda: lease_snapshot(table, active, now, lease))
        answer: Answer = self.decider.decide(request)
        self.calls.add(now, int(active.size), answer)
        placements = self._placements(answer, request) if answer.usable else {}
        types = {j: self._node_type[next(iter(p))] for j, p in placements.items()}
        self.holdings.enact(now, placements, types)
        slowdown = self._slowdown(placements) if self._slowdown is not None else None
        return running_from(table, placements, types, slowdown)

    def _placements(self, answer: Answer, request: Request) -> dict[int, Placement]:
        table = self.table
        for job_id, metrics in answer.metrics.items():
            if metrics.get("guaranteed") is not None:
                table.guaranteed[table.index[job_id]] = bool(metrics["guaranteed"])
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
        return None
