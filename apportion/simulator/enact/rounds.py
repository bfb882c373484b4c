"""Rounds (Gavel): a time-fraction allocation X enacted in rounds of fixed length.

At each round boundary the policy is re-solved if a trigger fired (arrivals, completions, every
N rounds); `mechanism.next_round` then picks who runs this round and where, from X, the time each
job has received on each type since X was computed, and the previous round's placements (jobs
that keep their GPUs get a lease extension and pay no preemption). Jobs arriving mid-round wait
for the next round; GPUs freed by a job finishing mid-round stay idle until then (as in Gavel).
Jobs that arrived since the last solve have no entry and run nowhere until the next, as in
Gavel's simulator; with `Resolve.backfill` they run instead at priority 0 on the GPUs the
allocation's jobs leave free (`mechanism.backfill`). Under Gavel's round rule the entries
without time, and agnostic policies' answers, are served as Gavel's simulator serves them
(`simulator.enact.gavel`).
Space sharing: pair allocations returned by the policy are passed on; co-located jobs run at
their pair throughputs and their GPUs are counted once.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from apportion.mechanism.arrays import Allocation, Cluster
from apportion.mechanism.rounds import Plan, Planner
from apportion.mechanism.types import PairShare
from apportion.simulator.belief import belief_for
from apportion.simulator.clients import Decider, Reply, Request
from apportion.simulator.config import Contention, SimConfig
from apportion.simulator.enact import gavel
from apportion.simulator.enact.common import CallLog, Holdings, Placement, running_from
from apportion.simulator.enact.contention import Slowdown
from apportion.simulator.snapshots import rounds_snapshot
from apportion.simulator.state import JobStates, Running, Step
from apportion.solver.arraytypes import IntArray


class RoundsEnactor:
    event_driven = False
    asks_every_decision = False
    idle_patience = 0

    def __init__(self, table: JobStates, decider: Decider, config: SimConfig) -> None:
        self._planner: Planner | None = None
        self._cluster: Cluster | None = None
        self._to_table: list[int] = []  # the table's column of each of the cluster's types
        self.table, self.decider, self.config = table, decider, config
        self.calls = CallLog()
        self.holdings = Holdings(table, config.overhead)
        self.allocation: Allocation = {}
        self.pairs: list[dict[str, Any]] = []
        # Seconds each offered pair has run together per type since the allocation.
        self.together: dict[tuple[str, str], dict[str, float]] = {}
        self._partner: dict[int, str] = {}
        self._request: Request | None = None
        self._backfill = config.resolve_for(decider.baseline).backfill
        self._spare = gavel.spare(config)
        # Gavel's agnostic policies: a random order of the types' queues each round.
        self._shuffle = np.random.default_rng(config.seed) if gavel.agnostic(config) else None
        self._covered: set[int] = set()  # the jobs the last solve was asked about
        self._gpus: dict[str, int] = {}
        for node in table.trace.cluster.nodes:
            self._gpus[node.gpu_type] = self._gpus.get(node.gpu_type, 0) + node.gpus
        self._version = -1
        self._allocation: Allocation = {}
        self._shares: list[Any] = []
        self._pair_rates: dict[tuple[str, str], dict[str, list[float]]] = {}
        contention = table.trace.contention
        persist = config.contention == Contention.REFERENCE
        self._slowdown = Slowdown(table, contention, persist) if contention is not None else None
        self.belief = belief_for(table, config)

    def length(self, now: float) -> float:
        return now + self.config.round_seconds

    def decide(self, now: float, solve: bool) -> Running:
        table = self.table
        changed = table.version != self._version
        fresh = solve and not self.decider.baseline  # a policy reads the snapshot's numbers
        if changed or fresh or self._request is None:
            self._request = self._new_request(table.active(), now)
            self._version = table.version
        request = self._request
        if solve:
            self._solve(request, now)
        started = time.perf_counter()
        if changed or solve or self._planner is None:
            self._offer(request.jobs)
            # Built here from checked parts: the planner keeps what only changes with them.
            snapshot = request.snapshot
            if self._cluster is None:  # the trace's nodes throughout
                self._cluster = Cluster.of(snapshot)
                column = {k: i for i, k in enumerate(self.table.types)}
                self._to_table = [column[name] for name in self._cluster.type_names]
            self._planner = Planner(
                snapshot,
                self._allocation,
                self._shares,
                rule=self.config.round_rule,
                round_seconds=self.config.round_seconds,
                cluster=self._cluster,
                uncovered=self._uncovered(request.jobs),
                backfill=self._backfill,
                spare=self._spare,
                order=self.config.round_order,
            )
        received = self.table.since[request.jobs]  # the snapshot's jobs and types, in order
        order = None
        if self._shuffle is not None:
            order = self._shuffle.permutation(len(self._to_table))
        plan = self._planner.plan(received, self.holdings.by_id, type_rank=order, why=False)
        self.calls.mechanism_seconds += time.perf_counter() - started
        return self._enact(now, plan, request.jobs)

    def _uncovered(self, active: IntArray) -> list[str]:
        """The active jobs the last solve was not asked about, by arrival."""
        table = self.table
        new = [j for j in active.tolist() if j not in self._covered]
        return [table.ids[j] for j in sorted(new, key=lambda j: (table.arrival[j], j))]

    def _offer(self, active: IntArray) -> None:
        """What the mechanism is given until the jobs or the allocation change: the allocation
        of jobs still active, and the policy's pairs among them with their time together."""
        ids = [self.table.ids[j] for j in active.tolist()]
        given = self.allocation
        # A policy's columns go as they are: the mechanism reads only the snapshot's jobs.
        if isinstance(given, Mapping):
            given = {i: given[i] for i in ids if i in given}
        self._allocation = given
        alive = set(ids)
        self._shares = [
            PairShare(p["a"], p["b"], p["allocation"], self.together.setdefault(_key(p), {}))
            for p in self.pairs
            if p["a"] in alive and p["b"] in alive
        ]

    def _new_request(self, active: IntArray, now: float) -> Request:
        config = self.config

        def build() -> dict[str, Any]:
            document = rounds_snapshot(
                self.table, active, now, config.policy, config.options, config.entity_weights
            )
            self._pair_rates = {
                (p["a"], p["b"]): p["throughput"] for p in document.get("job_pairs", [])
            }
            if self.belief is not None:  # the policy is told the belief; jobs run at the truth
                document = self.belief.view(document)
                self.calls.notes.update(self.belief.summary())
            return document

        return Request(self.table, active, now, build)

    def _solve(self, request: Request, now: float) -> None:
        answer: Reply = self.decider.decide(request)
        self.calls.add(now, int(request.jobs.size), answer)
        if not answer.usable:
            return  # keep enacting the last allocation the policy stood behind
        self._covered = set(request.jobs.tolist())
        self.allocation = answer.columns if answer.columns is not None else answer.allocation
        if self._shuffle is not None:
            self.allocation = gavel.spread(self.allocation, self._gpus, self._scales(request))
        self.pairs = answer.pairs
        # Gavel's priorities compare X with the time received since X was computed.
        self.table.since[:] = 0.0
        self.together = {}

    def _scales(self, request: Request) -> dict[str, int]:
        table = self.table
        return {table.ids[j]: table.trace.jobs[j].scale_factor for j in request.jobs.tolist()}

    def _enact(self, now: float, plan: Plan, jobs: IntArray) -> Running:
        """The round's chosen rows as the jobs (`jobs`: the snapshot's, in its order) that run,
        where, on which type, whether they keep their GPUs and with which pair partner: what
        `Round.assignments` says of them, read from the plan without writing it out."""
        table = self.table
        to_table = self._to_table
        held, ids, members, job = self.holdings.previous, table.ids, plan.rows.rows, jobs.tolist()
        m, scale = plan.rows.num_jobs, plan.rows.scale_list
        placements: dict[int, Placement] = {}
        kinds: list[int] = []  # per job placed, in order: its type (the table's column)
        changed: list[int] = []  # the jobs placed that start or move
        partner: dict[int, str] = {}
        gpus: list[int] = []  # per job placed: the GPUs its row's placement holds
        for c, k, placement in zip(
            plan.selection.rows, plan.selection.types, plan.placements, strict=True
        ):
            if c < m:  # a job alone; `Holdings.enact` keeps its own copy
                j = job[c]
                placements[j] = placement
                kinds.append(to_table[k])
                gpus.append(scale[c])
                if held.get(j) != placement:
                    changed.append(j)
                continue
            a, b = (job[i] for i in members[c])
            for j, other in ((a, b), (b, a)):
                placements[j] = dict(placement)
                kinds.append(to_table[k])
                gpus.append(scale[c])
                if held.get(j) != placement:
                    changed.append(j)
                partner[j] = ids[other]
        enacted = self.holdings.record(now, placements, kinds, changed)
        slowdown = None
        if self._slowdown is not None:
            slowdown = self._slowdown(placements, changed)
        running = running_from(table, placements, enacted, slowdown, gpus)
        self._partner = partner
        if partner:
            self._share(running, partner)
        return running

    def _share(self, running: Running, partner: dict[int, str]) -> None:
        """Co-located pairs: each member at its pair throughput, the GPUs counted once."""
        table = self.table
        position = {int(j): row for row, j in enumerate(running.jobs)}
        for j, other in partner.items():
            me = table.ids[j]
            rates = self._pair_rates.get((me, other))
            mine = 0
            if rates is None:
                rates, mine = self._pair_rates.get((other, me), {}), 1
            kind = table.types[int(running.type[position[j]])]
            if kind in rates:
                running.rate[position[j]] = rates[kind][mine]
            if table.index[other] < j:  # the pair's GPUs were counted with its first member
                running.gpus[position[j]] = 0

    def after(self, step: Step, running: Running) -> None:
        """Forget what finished jobs held; count the time pairs ran together. (The time each
        job received is `table.since`, kept by `simulator.state.advance`.)"""
        table = self.table
        self.holdings.forget(step.finished)
        held = step.end - step.start
        if self.belief is not None:
            self.belief.observe(step, running, self._partner)
        for j, other in self._partner.items():
            me = table.ids[j]
            if me < other:  # each pair once
                kind = table.types[int(table.cur_type[j])]
                together = self.together.setdefault((me, other), {})
                together[kind] = together.get(kind, 0.0) + held


def _key(pair: dict[str, Any]) -> tuple[str, str]:
    a, b = str(pair["a"]), str(pair["b"])
    return (a, b) if a < b else (b, a)
