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

from bisect import bisect_left, insort
from collections.abc import Mapping, Sequence

from apportion.mechanism.arrays import Cluster, Combos
from apportion.solver.arraytypes import IntArray

Placement = dict[str, int]


def place(
    rows: Sequence[int],
    types: Sequence[int],
    combos: Combos,
    cluster: Cluster,
    previous: Mapping[str, Mapping[str, int]],
) -> list[Placement]:
    """One placement (node id → GPUs) per chosen row (`rows[i]` on type `types[i]`), in
    their order."""
    # Lease extensions first, on plain free counts; the fresh gangs then on free-count buckets
    # built once (for the types they need) from what the extensions left.
    free = [list(gpus) for gpus in cluster.node_gpus_by_type]
    scale = combos.scale_list
    gangs = [scale[row] for row in rows]
    placed: list[Placement | None] = [None] * len(rows)
    fresh = _extensions(rows, types, gangs, combos, cluster, previous, free, placed)
    larger = [-gang for gang in gangs]
    fresh.sort(key=larger.__getitem__)  # stable: ties stay in serving order
    buckets: dict[int, FreeGpus] = {}
    names = cluster.node_ids_by_type
    for i in fresh:
        k = types[i]
        bucket = buckets.get(k)
        if bucket is None:
            bucket = buckets[k] = FreeGpus(free[k])
        placed[i] = {names[k][local]: gpus for local, gpus in bucket.take_fewest(gangs[i])}
    return placed  # type: ignore[return-value]  # every row is placed by now


def _extensions(
    rows: Sequence[int],
    types: Sequence[int],
    gangs: list[int],
    combos: Combos,
    cluster: Cluster,
    previous: Mapping[str, Mapping[str, int]],
    free: list[list[int]],
    placed: list[Placement | None],
) -> list[int]:
    """The lease extensions, in serving order, into `placed` (taken from `free`); returns the
    rows left to place afresh."""
    if not previous:
        return list(range(len(rows)))
    fresh: list[int] = []
    where, ids, members, m = cluster.where, combos.job_ids, combos.rows, combos.num_jobs
    for i, row in enumerate(rows):
        kind = types[i]
        if row < m:  # a job alone, the usual row: its one-node lease inline
            held = previous.get(ids[row])
            if held and len(held) == 1:
                ((node, gpus),) = held.items()
                k, n = where[node]
                left = free[kind]
                if gpus == gangs[i] and k == kind and left[n] >= gpus:
                    left[n] -= gpus
                    placed[i] = {node: gpus}
                else:
                    fresh.append(i)
                continue
        for j in (row,) if row < m else members[row]:
            held = previous.get(ids[j])
            if held and _extend(held, gangs[i], kind, where, free[kind]):
                placed[i] = dict(held)
                break
        else:
            fresh.append(i)
    return fresh


class FreeGpus:
    """The free GPUs of one type's nodes, grouped by how many each has free, so that a best
    fit costs a binary search over the distinct counts whatever the number of nodes."""

    def __init__(self, free: Sequence[int]) -> None:
        self.free = list(free)
        self.at: dict[int, list[int]] = {}  # free count -> its nodes, ascending
        for node, count in enumerate(self.free):
            if count > 0:
                self.at.setdefault(count, []).append(node)
        self.counts = sorted(self.at)  # the distinct positive free counts, ascending

    def take(self, node: int, gpus: int) -> None:
        count = self.free[node]
        nodes = self.at[count]
        del nodes[bisect_left(nodes, node)]
        if not nodes:
            del self.at[count]
            del self.counts[bisect_left(self.counts, count)]
        self._refile(node, count - gpus)

    def _refile(self, node: int, left: int) -> None:
        """Record `node` as holding `left` free GPUs (not filed at all when none are left)."""
        self.free[node] = left
        if left > 0:
            if left in self.at:
                insort(self.at[left], node)
            else:
                self.at[left] = [node]
                insort(self.counts, left)

    def take_fewest(self, gang: int) -> list[tuple[int, int]]:
        """`fewest`, taken; on one node (the usual gang) in one step."""
        counts = self.counts
        fits = bisect_left(counts, gang)
        if fits == len(counts):
            pieces = self.fewest(gang)
            for node, gpus in pieces:
                self.take(node, gpus)
            return pieces
        count = counts[fits]
        nodes = self.at[count]
        node = nodes.pop(0)  # the earliest node of the best fit
        if not nodes:
            del self.at[count]
            del counts[fits]
        self._refile(node, count - gang)
        return [(node, gang)]

    def fewest(self, gang: int) -> list[tuple[int, int]]:
        """(node, GPUs) pieces holding `gang` GPUs on as few nodes as possible: best fit on
        one node when one has room, else the nodes with the most free GPUs whole (earlier
        node first among equals) and the last piece by best fit among the others. The caller
        guarantees Σ free ≥ gang."""
        fits = bisect_left(self.counts, gang)
        if fits < len(self.counts):
            return [(self.at[self.counts[fits]][0], gang)]
        whole: list[tuple[int, int]] = []
        left = gang
        for count in reversed(self.counts):
            for node in self.at[count]:
                if count >= left:
                    return [*whole, (self._best_fit(left, whole), left)]
                whole.append((node, count))
                left -= count
        raise ValueError(f"{gang} GPUs asked of {sum(self.free)} free")

    def _best_fit(self, gang: int, taken: list[tuple[int, int]]) -> int:
        skip = {node for node, _ in taken}
        for count in self.counts[bisect_left(self.counts, gang) :]:
            for node in self.at[count]:
                if node not in skip:
                    return node
        raise ValueError(f"no node has {gang} GPUs free")


def fewest_nodes(free: IntArray, gang: int) -> list[tuple[int, int]]:
    """`FreeGpus.fewest` on a vector of free GPUs per node."""
    return FreeGpus(free.tolist()).fewest(gang)


def _extend(
    held: Mapping[str, int],
    gang: int,
    kind: int,
    where: Mapping[str, tuple[int, int]],
    left: list[int],
) -> bool:
    """Whether the GPUs a member held last round hold this gang on this type and are all still
    free (`left`: the type's free GPUs per node); if so they are taken."""
    if len(held) == 1:  # the usual lease: one node
        ((node, gpus),) = held.items()
        k, n = where[node]
        if gpus != gang or k != kind or left[n] < gpus:
            return False
        left[n] -= gpus
        return True
    if sum(held.values()) != gang:
        return False
    spots = []
    for node, gpus in held.items():
        k, n = where[node]
        if k != kind or left[n] < gpus:
            return False
        spots.append((n, gpus))
    for n, gpus in spots:
        left[n] -= gpus
    return True
