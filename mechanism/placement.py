"""Where the selected gangs run: nodes and GPUs, consolidated, leases kept.

Order of placement (fixed, so a round is reproducible and checkable):

1. Lease extensions, in serving order: a row that runs on the type it ran on last round keeps
   exactly the GPUs it held (a pair keeps those of its first member that held a whole gang of
   that type, else of the second), provided those GPUs are still free. Nothing is preempted.
2. Every other row, largest gang first (ties in serving order), on the fewest nodes of its type
   that can hold it given the GPUs still free: a single node when one has room (the one with
   the least room that suffices: best fit, which leaves large holes for large gangs), else the
   nodes with the most free GPUs, the last piece again by best fit.

Largest-first with best fit packs gangs whose sizes divide each other and the node size (the
usual powers of two) on single nodes whenever their total fits the free GPUs. Selection only
counts GPUs per type, and a gang may span nodes, so every selected row is placed.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from mechanism.arrays import Cluster, Combos, IntArray
from mechanism.priority import Chosen

Placement = dict[str, int]


def place(
    chosen: tuple[Chosen, ...],
    combos: Combos,
    cluster: Cluster,
    previous: Mapping[str, Mapping[str, int]],
) -> list[Placement]:
    """One placement (node id → GPUs) per chosen row, in the order of `chosen`."""
    nodes = _Nodes(cluster)
    placed: list[Placement | None] = [None] * len(chosen)
    for i, ch in enumerate(chosen):
        placed[i] = _extended_lease(ch, combos, nodes, previous)
    fresh = [i for i, p in enumerate(placed) if p is None]
    fresh.sort(key=lambda i: (-int(combos.scale[chosen[i].row]), i))
    for i in fresh:
        ch = chosen[i]
        placed[i] = nodes.take_fewest(ch.gpu_type, int(combos.scale[ch.row]))
    return [p for p in placed if p is not None]


class _Nodes:
    """Free GPUs per node, kept per GPU type (nodes in snapshot order within a type)."""

    def __init__(self, cluster: Cluster) -> None:
        self.ids = cluster.node_ids
        self.members = [
            np.flatnonzero(cluster.node_type == k) for k in range(len(cluster.type_names))
        ]
        self.free = [cluster.node_gpus[m].copy() for m in self.members]
        self.where = {
            cluster.node_ids[int(n)]: (k, local)
            for k, m in enumerate(self.members)
            for local, n in enumerate(m.tolist())
        }

    def can_take(self, gpu_type: int, held: Mapping[str, int]) -> bool:
        for node_id, gpus in held.items():
            k, local = self.where[node_id]
            if k != gpu_type or self.free[k][local] < gpus:
                return False
        return True

    def take(self, held: Mapping[str, int]) -> Placement:
        for node_id, gpus in held.items():
            k, local = self.where[node_id]
            self.free[k][local] -= gpus
        return dict(held)

    def take_fewest(self, gpu_type: int, gang: int) -> Placement:
        free = self.free[gpu_type]
        pieces = fewest_nodes(free, gang)
        ids = self.members[gpu_type]
        for local, gpus in pieces:
            free[local] -= gpus
        return {self.ids[int(ids[local])]: gpus for local, gpus in pieces}


def fewest_nodes(free: IntArray, gang: int) -> list[tuple[int, int]]:
    """(node, GPUs) pieces holding `gang` GPUs on as few nodes as `free` allows (best fit on
    one node when possible). The caller guarantees Σ free ≥ gang."""
    fits = np.flatnonzero(free >= gang)
    if fits.size:
        # argmin takes the first of equal candidates: the earliest node, deterministically.
        return [(int(fits[np.argmin(free[fits])]), gang)]
    order = np.argsort(-free, kind="stable")
    total = np.cumsum(free[order])
    count = int(np.searchsorted(total, gang)) + 1  # the fewest largest nodes that hold it
    whole = order[: count - 1]
    left = gang - (int(total[count - 2]) if count > 1 else 0)
    rest = order[count - 1 :]
    room = rest[free[rest] >= left]
    last = int(room[np.argmin(free[room])])
    return [(int(n), int(free[n])) for n in whole] + [(last, left)]


def _extended_lease(
    ch: Chosen, combos: Combos, nodes: _Nodes, previous: Mapping[str, Mapping[str, int]]
) -> Placement | None:
    gang = int(combos.scale[ch.row])
    for j in combos.members(ch.row):
        held = previous.get(combos.job_ids[j])
        if held and sum(held.values()) == gang and nodes.can_take(ch.gpu_type, held):
            return nodes.take(held)
    return None
