"""Where a gang goes on the GPUs nodes have free (Tiresias §3.3, consolidation only where it
pays).

- A sensitive gang of g GPUs on type k takes the fewest nodes that hold it: the node with the
  least room that suffices when one node does (best fit), else the m nodes with the most free
  GPUs, filled whole, the last piece by best fit among the others. Such m nodes exist exactly
  when the m largest free counts add up to g, which is the test `fits_consolidated` makes.
- Any other gang fills the smallest holes first (nodes of its type with the fewest free GPUs),
  spreading over as many nodes as it takes: it leaves whole nodes to gangs that need them.
"""

from __future__ import annotations

import numpy as np

from apportion.solver.arraytypes import IntArray

Pieces = dict[int, int]  # node index → GPUs


def fits_consolidated(free: IntArray, on_type: IntArray, gang: int, fewest: int) -> bool:
    """Whether `fewest` nodes among `on_type` have `gang` GPUs free between them."""
    if fewest <= 0:
        return False
    top = np.sort(free[on_type])[::-1][:fewest]
    return bool(top.sum() >= gang)


def consolidated(free: IntArray, on_type: IntArray, gang: int, fewest: int) -> Pieces | None:
    """The fewest-node pieces for `gang` among nodes `on_type`, or None if they do not fit."""
    if not fits_consolidated(free, on_type, gang, fewest):
        return None
    room = free[on_type]
    single = np.flatnonzero(room >= gang)
    if single.size:
        best = single[np.argmin(room[single])]
        return {int(on_type[best]): gang}
    by_room = np.argsort(-room, kind="stable")
    pieces: Pieces = {}
    left = gang
    for local in by_room[: fewest - 1].tolist():
        take = min(int(room[local]), left)
        pieces[int(on_type[local])] = take
        left -= take
    if left:
        rest = by_room[fewest - 1 :]
        enough = rest[room[rest] >= left]
        last = enough[np.argmin(room[enough])]
        pieces[int(on_type[last])] = left
    return pieces


def into_holes(free: IntArray, on_type: IntArray, gang: int) -> Pieces | None:
    """`gang` GPUs from the nodes `on_type` with the fewest free GPUs first, or None if the
    type has too few."""
    room = free[on_type]
    if room.sum() < gang:
        return None
    order = np.argsort(np.where(room > 0, room, np.iinfo(np.int64).max), kind="stable")
    taken = np.minimum(room[order], np.maximum(gang - np.cumsum(room[order]) + room[order], 0))
    used = taken > 0
    return {int(on_type[i]): int(t) for i, t in zip(order[used], taken[used], strict=True)}


def take(free: IntArray, pieces: Pieces) -> None:
    for node, gpus in pieces.items():
        free[node] -= gpus
