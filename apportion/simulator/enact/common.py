"""What every enactment mode shares: who held which GPUs before (to charge preemption only on
real moves), the log of policy calls, and simple node placement for deciders that return
allocations without placements (baselines in lease or placement mode)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from apportion.simulator.clients import Decider, Reply
from apportion.simulator.config import SimConfig
from apportion.simulator.overhead import Overhead
from apportion.simulator.state import JobStates, Running
from apportion.solver.arraytypes import FloatArray, IntArray

Placement = dict[str, int]


@dataclass
class CallLog:
    """One row per policy call: when, how long (as the caller saw it and as the policy
    reported), how many jobs it was asked about, its status and why its solver stopped."""

    time: list[float] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    solver_seconds: list[float] = field(default_factory=list)
    cpu_seconds: list[float] = field(default_factory=list)
    jobs: list[int] = field(default_factory=list)
    status: list[str] = field(default_factory=list)
    termination: list[str] = field(default_factory=list)
    mechanism_seconds: float = 0.0  # in `mechanism.next_round` (rounds mode)
    notes: dict[str, float] = field(default_factory=dict)  # for the summary (the belief's error)

    def add(self, now: float, jobs: int, answer: Reply) -> None:
        self.time.append(now)
        self.seconds.append(answer.seconds)
        self.solver_seconds.append(answer.solver_seconds)
        self.cpu_seconds.append(answer.cpu_seconds)
        self.jobs.append(jobs)
        self.status.append(answer.status)
        self.termination.append(answer.termination)


class Enacted(NamedTuple):
    """The jobs placed this round or lease, in the placements' order, and their types."""

    jobs: IntArray
    kind: IntArray


@dataclass
class Holdings:
    """The placements of the previous round or lease, to tell a lease extension (same GPUs:
    no cost) from a move (the job stops and restarts elsewhere: the `overhead` model's seconds
    lost, `simulator.overhead`)."""

    table: JobStates
    overhead: Overhead
    previous: dict[int, Placement] = field(default_factory=dict)
    by_id: dict[str, Placement] = field(default_factory=dict)  # the same, keyed by job id
    cost: FloatArray = field(init=False)  # per job: the seconds a (re)start costs it

    def __post_init__(self) -> None:
        # A job's own restart time (Sia's per-model figures) where the trace gives one.
        own = self.table.restart_seconds
        modelled = self.overhead.seconds(self.table.scale)
        self.cost = np.where(np.isnan(own), modelled, own)

    def enact(
        self,
        now: float,
        placements: Mapping[int, Placement],
        types: Mapping[int, int],
        kept: Mapping[int, bool] | None = None,
    ) -> Enacted:
        """Record the new holdings: moves, first starts, delays, the type each job runs on.
        Returns the jobs (in `placements`' order) and their types, as arrays."""
        jobs = list(placements)
        # Most rounds extend most leases: only the jobs that start or move pay anything.
        if kept is None:
            changed = [j for j in jobs if self.previous.get(j) != placements[j]]
        else:
            changed = [j for j in jobs if not kept[j]]
        return self.record(now, placements, list(map(types.__getitem__, jobs)), changed)

    def record(
        self, now: float, placements: Mapping[int, Placement], kinds: list[int], changed: list[int]
    ) -> Enacted:
        """`enact` with the types as a list in `placements`' order and the jobs that start or
        move (`changed`) already known (a caller that built them as it went)."""
        table, previous = self.table, self.previous
        jobs = list(placements)
        index = np.array(jobs, dtype=np.int64)
        kind = np.array(kinds, dtype=np.int64)
        if changed:
            fresh = np.array(changed, dtype=np.int64)
            started = ~np.isnan(table.first_start[fresh])
            moved = fresh[started]
            table.moves[moved] += 1
            table.first_start[fresh[~started]] = now
            paying = fresh if self.overhead.first_start else moved
            table.delay_left[paying] = self.cost[paying]
        stopped = list(previous.keys() - placements.keys())
        if stopped:
            table.delay_left[stopped] = 0.0  # a job that stops pays its cost when it restarts
            table.cur_type[stopped] = -1
        table.cur_type[index] = kind
        self.previous = dict(placements)  # the placements are the caller's to give away
        self.by_id = dict(zip(map(table.ids.__getitem__, jobs), placements.values(), strict=True))
        return Enacted(index, kind)

    def forget(self, finished: IntArray) -> None:
        """Finished jobs hold nothing any more."""
        for j in finished.tolist():
            self.previous.pop(j, None)
            self.by_id.pop(self.table.ids[j], None)
        self.table.cur_type[finished] = -1


def node_types(table: JobStates) -> dict[str, int]:
    column = {k: i for i, k in enumerate(table.types)}
    return {node.id: column[node.gpu_type] for node in table.trace.cluster.nodes}


def running_from(
    table: JobStates,
    placements: Mapping[int, Placement],
    enacted: Enacted,
    slowdown: Mapping[int, float] | None = None,
    held: list[int] | None = None,
) -> Running:
    """Running jobs at their own throughput on their type, divided by any contention slowdown
    (`enacted`: what `Holdings.enact` returned for these placements; `held`: the GPUs each
    placement holds, when the caller knows them)."""
    jobs, kind = enacted
    if held is None:
        held = list(map(_held, placements.values()))
    gpus = np.array(held, dtype=np.int64)
    rate: FloatArray = table.thr[jobs, kind] if jobs.size else np.zeros(0)
    if table.spread:  # empty unless the trace measured spreads
        rate = rate.copy()
        for row, j in enumerate(jobs.tolist()):
            # A trace that measured each spread (DeepShare) knows the job's speed on these nodes.
            by_nodes = table.spread[j]
            if len(placements[j]) in by_nodes:
                rate[row] = by_nodes[len(placements[j])]
    if slowdown:
        rate = rate / np.array([slowdown.get(j, 1.0) for j in jobs.tolist()])
    return Running(jobs, kind.reshape(-1), gpus.reshape(-1), rate)


def _held(placement: Placement) -> int:
    if len(placement) == 1:  # the usual gang: one node
        for gpus in placement.values():
            return gpus
    return sum(placement.values())


def first_fit(
    table: JobStates,
    allocation: Mapping[str, Mapping[str, float]],
    free: dict[str, int],
    order: IntArray,
) -> dict[int, Placement]:
    """Place each allocated job (in `order`) on the type it was given most time on among those
    where it makes progress (time on a type where its throughput is 0 is never enacted): whole
    on the fullest node that fits it, else spread over the nodes with the most free GPUs."""
    nodes = table.trace.cluster.nodes
    column = {k: i for i, k in enumerate(table.types)}
    placed: dict[int, Placement] = {}
    for j in order.tolist():
        given = {
            k: v for k, v in allocation.get(table.ids[j], {}).items() if table.thr[j, column[k]] > 0
        }
        if not given:
            continue
        kind = max(given, key=lambda k: given[k])
        need = int(table.scale[j])
        candidates = [n.id for n in nodes if n.gpu_type == kind and free[n.id] > 0]
        whole = [n for n in candidates if free[n] >= need]
        if whole:
            node = min(whole, key=lambda n: free[n])
            placed[j] = {node: need}
            free[node] -= need
            continue
        if sum(free[n] for n in candidates) < need:
            continue
        spread: Placement = {}
        for node in sorted(candidates, key=lambda n: -free[n]):
            take = min(free[node], need - sum(spread.values()))
            if take:
                spread[node] = take
        for node, gpus in spread.items():
            free[node] -= gpus
        placed[j] = spread
    return placed


class NodeEnactor:
    """What the enactors that place jobs on nodes themselves share: driven by events, the
    placements they hold, the cluster's nodes, and re-solves every N rounds when asked."""

    event_driven = True
    asks_every_decision = False
    idle_patience = 0

    def __init__(self, table: JobStates, decider: Decider, config: SimConfig) -> None:
        self.table, self.decider, self.config = table, decider, config
        self.calls = CallLog()
        self.holdings = Holdings(table, config.overhead)
        self.placements: dict[int, Placement] = {}
        self._node_type = node_types(table)
        self._gpus = {n.id: n.gpus for n in table.trace.cluster.nodes}

    def length(self, now: float) -> float:
        every = self.config.resolve_for(self.decider.baseline).every
        return now + every * self.config.round_seconds if every else np.inf
