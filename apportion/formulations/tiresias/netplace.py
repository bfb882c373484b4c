"""Jobs placed one after another by the appendix ILP (`traffic`), each on the GPUs and under
the network load that running jobs and the jobs placed before it leave.

A running job's traffic is computed from its tensor sizes with its PSs on its workers' nodes
(`traffic.job_traffic`); a job without tensor sizes, or on one GPU, sends nothing over the
network, and a job to place without them goes into the smallest holes (`placing`). A job is
placed on the type its decision gives it, or on the first type it can use with room.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from apportion.formulations.tiresias.greedy import Decision, node_free
from apportion.formulations.tiresias.instance import Instance
from apportion.formulations.tiresias.placing import into_holes, take
from apportion.formulations.tiresias.traffic import (
    Placed,
    added_load,
    job_traffic,
    place,
    ps_loads,
)
from apportion.solver.arraytypes import FloatArray, IntArray
from apportion.solver.context import SolveContext
from apportion.solver.policy import Outcome
from apportion.solver.status import Status


@dataclass
class Network:
    """What the placements did: per job its ILP answer, and the nodes' load after them."""

    placed: dict[int, Placed] = field(default_factory=dict)
    load: FloatArray = field(default_factory=lambda: np.zeros(0))
    before: float = 0.0  # the most loaded node's traffic before

    @property
    def status(self) -> Status:
        found = [p.status for p in self.placed.values()]
        if all(s is Status.OPTIMAL for s in found):
            return Status.OPTIMAL
        return Status.FEASIBLE if any(s.has_solution for s in found) else Status.FALLBACK

    @property
    def gap(self) -> float | None:
        gaps = [p.gap for p in self.placed.values() if p.gap is not None]
        return max(gaps) if gaps else None


def load_of(inst: Instance, decision: Decision) -> FloatArray:
    """The network load per node of the decision's running and started jobs."""
    n = inst.node_gpus.size
    load = np.zeros(n)
    for j in np.flatnonzero(decision.kept).tolist():
        nodes, gpus = inst.holding(j)
        load += job_traffic(nodes, gpus, inst.tensors[j], n)
    for j, (_, pieces) in decision.started.items():
        nodes = np.fromiter(pieces, dtype=np.int64)
        gpus = np.array([pieces[int(v)] for v in nodes], dtype=np.int64)
        load += job_traffic(nodes, gpus, inst.tensors[j], n)
    return load


def place_in_turn(
    inst: Instance,
    decision: Decision,
    jobs: list[int],
    ctx: SolveContext,
    kind: dict[int, int] | None = None,
    tie_break: bool = True,
) -> Network:
    """Place `jobs` (none of them in `decision` yet), in this order, into `decision`."""
    free = node_free(inst, decision.kept)
    for _, pieces in decision.started.values():
        take(free, pieces)
    load = load_of(inst, decision)
    out = Network(before=float(load.max(initial=0.0)))
    for j in jobs:
        k = _type(inst, free, j, (kind or {}).get(j))
        if k is None:
            continue
        on_type = np.flatnonzero(inst.node_type == k)
        g = int(inst.gang[j])
        tensors = inst.tensors[j]
        if g < 2 or tensors is None:
            holes = into_holes(free, on_type, g)
            assert holes is not None  # `_type` found the room
            pieces = holes
        else:
            room = np.where(inst.node_type == k, free, 0)
            placed = place(room, load, g, tensors, ctx, ctx.budget.left(), tie_break)
            out.placed[j] = placed
            pieces = {int(n): int(w) for n, w in enumerate(placed.workers) if w}
            added, _ = added_load(placed.workers, placed.ps_node, g, ps_loads(tensors, g))
            load += added
        decision.started[j] = (k, pieces)
        take(free, pieces)
    out.load = load
    return out


def _type(inst: Instance, free: IntArray, j: int, given: int | None) -> int | None:
    g = int(inst.gang[j])
    for k in [given] if given is not None else np.flatnonzero(inst.usable[j]).tolist():
        if free[inst.node_type == k].sum() >= g:
            return int(k)
    return None


def regroup(decision: Decision, jobs: list[int]) -> tuple[Decision, dict[int, int]]:
    """The decision without `jobs`' placements, and the type each had."""
    kind = {j: decision.started[j][0] for j in jobs}
    rest = {j: v for j, v in decision.started.items() if j not in kind}
    return Decision(decision.kept.copy(), rest), kind


def with_network(outcome: Outcome, network: Network) -> Outcome:
    """The outcome with what the network-load placements found: their status (the worse of
    the two answers), gap and the nodes' most loaded traffic before and after."""
    status = outcome.status
    if network.status is not Status.OPTIMAL and status is Status.OPTIMAL:
        status = Status.FEASIBLE
    summary = {
        "max_network_load_before": network.before,
        "max_network_load": float(network.load.max(initial=0.0)),
        "network_placements": len(network.placed),
        "network_placements_proven": sum(
            p.status is Status.OPTIMAL for p in network.placed.values()
        ),
    }
    gap = network.gap if network.gap is not None else outcome.mip_gap
    return outcome.but(status=status, mip_gap=gap).summarized(**summary)
