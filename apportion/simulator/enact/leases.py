"""Leases (Chronus): the policy asked as a deployment would, on a fixed grid of leases.

Leases lie on one fixed grid of `lease_seconds` (from the first decision, restarted only when
no active job holds GPUs or a guarantee). By default the policy is asked at every arrival (so
admission happens on arrival), every completion (so GPUs freed in the middle of a lease are
lent at once) and every lease boundary; with `call_seconds` it is asked every `call_seconds`
and at boundaries instead (a caller that admits every few minutes: arrivals wait and freed GPUs
stay idle until the next call).

Every job that runs holds its GPUs until the end of the lease it was started in: a call in the
middle of a lease hands out only the GPUs nobody holds, and at a boundary every job may be
kept, moved or stopped. Each call the policy gets the active jobs with their remaining time at
full speed, deadlines, `guaranteed: true` for every job an earlier answer guaranteed (so
guarantees carry over), the grid's phase (`lease_start`), each job's restart overhead
(`overhead_seconds`, the simulation's `overhead` model) and, for a running job, its
`placement` (with `held_until`, the lease's end, while it holds it; its remaining time then
includes any restore cost still to pay). The jobs it says run now run on the placements it
returns. A job whose guarantee is broken loses the flag and is marked in `JobStates.broken` (the
records' `guarantee_broken`).

A baseline (no placements in its answers) gets the same mechanics: it ranks the jobs that hold
nothing and hands out the free GPUs (`Request.free`); its jobs keep the GPUs they ran on when
those are free (a lease extension, no restart), the others are placed first-fit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from apportion.simulator.clients import Decider, Reply, Request
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
from apportion.simulator.remaining_belief import remaining_belief_for
from apportion.simulator.snapshots import Held, lease_snapshot
from apportion.simulator.state import EPS, JobStates, Running, Step
from apportion.solver.arraytypes import IntArray

#: Leases an idle cluster waits for a guaranteed job's reserved slot before giving up (the
#: admission policy's default planning horizon).
MAX_IDLE_LEASES = 288


class LeaseEnactor:
    asks_every_decision = True  # admission looks again at every decision point
    idle_patience = MAX_IDLE_LEASES

    def __init__(self, table: JobStates, decider: Decider, config: SimConfig) -> None:
        self.table, self.decider, self.config = table, decider, config
        self.event_driven = config.call_seconds is None
        self.call_seconds = config.call_seconds or config.lease_seconds
        self.calls = CallLog()
        self.holdings = Holdings(table, config.overhead)
        self.until: dict[int, float] = {}  # job → end of the lease it holds GPUs in
        self.promised: dict[int, float] = {}  # guaranteed job → the deadline promised to it
        self.origin: float | None = None
        self.start = 0.0  # the current lease's start
        self._node_type = node_types(table)
        self._overhead = config.overhead.seconds(table.scale)
        contention = table.trace.contention
        self._slowdown = Slowdown(table, contention) if contention is not None else None
        self.belief = remaining_belief_for(table, config)  # None: the truth is told
        if self.belief is not None and decider.baseline:
            raise ValueError(
                f"remaining_time_noise: baseline {config.policy!r} ranks on the simulator's own "
                "state; a belief reaches only policies sent a snapshot"
            )

    def length(self, now: float) -> float:
        end = self.start + self.config.lease_seconds
        return end if self.event_driven else min(now + self.call_seconds, end)

    def decide(self, now: float, solve: bool) -> Running:
        # Every call is a decision: admission must see the jobs' progress each time.
        table = self.table
        active = table.active()
        self.start = self._lease_start(now, active)
        running = self._running(active, now)
        holding = {j for j, held in running.items() if held.until > now}
        request = self._request(now, active, running, holding)
        answer: Reply = self.decider.decide(request)
        self.calls.add(now, int(active.size), answer)
        kept = {j: dict(running[j].placement) for j in holding}
        placements = self._placements(answer, request, running, kept) if answer.usable else kept
        types = {j: self._node_type[next(iter(p))] for j, p in placements.items()}
        enacted = self.holdings.enact(now, placements, types)
        end = self.start + self.config.lease_seconds
        self.until = {j: self.until[j] if j in holding else end for j in placements}
        slowdown = self._slowdown(placements) if self._slowdown is not None else None
        return running_from(table, placements, enacted, slowdown)

    def _request(
        self, now: float, active: IntArray, running: dict[int, Held], holding: set[int]
    ) -> Request:
        table, lease, start = self.table, self.config.lease_seconds, self.start
        if self.decider.baseline:
            waiting = np.array([j for j in active.tolist() if j not in holding], dtype=np.int64)
            free = table.capacity.copy()
            for j in holding:
                free[table.cur_type[j]] -= table.scale[j]
            return Request(table, waiting, now, dict, free=free)
        overhead, promised = self._overhead[active], dict(self.promised)

        def snapshot() -> dict[str, Any]:
            document = lease_snapshot(table, active, now, lease, start, running, overhead, promised)
            if self.belief is None:
                return document
            # The policy is told the belief; jobs run, and deadlines are scored, at the truth.
            believed = self.belief.view(document)
            self.calls.notes.update(self.belief.summary())
            return believed

        return Request(table, active, now, snapshot)

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

    def _running(self, active: np.ndarray, now: float) -> dict[int, Held]:
        """Active jobs on GPUs now, where, and until when they hold them (−inf: a hold that
        ends at `now`, within round-off, holds nothing)."""
        previous = self.holdings.previous
        return {
            j: Held(
                previous[j],
                until if (until := self.until.get(j, -math.inf)) > now + EPS else -math.inf,
            )
            for j in active.tolist()
            if j in previous
        }

    def _placements(
        self,
        answer: Reply,
        request: Request,
        running: Mapping[int, Held],
        kept: dict[int, Placement],
    ) -> dict[int, Placement]:
        table = self.table
        if self.decider.baseline:
            free = {n.id: n.gpus for n in table.trace.cluster.nodes}
            for placement in kept.values():
                for node, gpus in placement.items():
                    free[node] -= gpus
            order = np.array([table.index[i] for i in answer.allocation], dtype=np.int64)
            placed = self._sticky(answer.allocation, free, order, running)
            return {**kept, **placed}
        for job_id, metrics in answer.metrics.items():
            if metrics.get("guaranteed") is not None:
                j = table.index[job_id]
                # A guarantee given earlier and withdrawn now is broken, whatever the answer
                # calls it (and a broken one stays counted if the job is admitted again).
                table.broken[j] |= bool(table.guaranteed[j]) and not metrics["guaranteed"]
                table.guaranteed[j] = bool(metrics["guaranteed"])
                self._promise(j, metrics)
        runs = {
            table.index[job_id]: dict(p)
            for job_id, p in answer.placement.items()
            if answer.metrics.get(job_id, {}).get("runs_now", True)
        }
        return {**kept, **runs}

    def _sticky(
        self,
        allocation: Mapping[str, Mapping[str, float]],
        free: dict[str, int],
        order: IntArray,
        running: Mapping[int, Held],
    ) -> dict[int, Placement]:
        """A baseline's jobs on the GPUs they ran on when those are free and of the type it
        was given (no restart); the others first-fit, in the baseline's order."""
        table, placed = self.table, {}
        column = {k: i for i, k in enumerate(table.types)}
        for j in order.tolist():
            given, before = allocation.get(table.ids[j]), running.get(j)
            if not given or before is None:
                continue
            kind = column[max(given, key=lambda k: given[k])]
            spot = before.placement
            same_type = self._node_type[next(iter(spot))] == kind
            if same_type and all(free[node] >= gpus for node, gpus in spot.items()):
                placed[j] = dict(spot)
                for node, gpus in spot.items():
                    free[node] -= gpus
        rest = np.array([j for j in order.tolist() if j not in placed], dtype=np.int64)
        return {**placed, **first_fit(table, allocation, free, rest)}

    def _promise(self, j: int, metrics: Mapping[str, object]) -> None:
        """The deadline a guaranteed job is promised; a later promise is a broken one."""
        deadline = metrics.get("deadline")
        if not metrics["guaranteed"] or not isinstance(deadline, int | float):
            self.promised.pop(j, None)
            return
        if deadline > self.promised.get(j, math.inf) + EPS:
            self.table.broken[j] = True
        self.promised[j] = float(deadline)

    def after(self, step: Step, running: Running) -> None:
        self.holdings.forget(step.finished)
        table = self.table
        for j in step.finished.tolist():
            self.until.pop(j, None)
            # A guarantee is kept only if the job ends by the deadline it was promised.
            promised = self.promised.pop(j, None)
            if promised is not None and table.finish[j] > promised + 1e-6:
                table.broken[j] = True
