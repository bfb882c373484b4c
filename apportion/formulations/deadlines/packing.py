"""Placing one lease's jobs on nodes: consolidated round-up packing and low-fragmentation fill.

Round-up proposition (FORMULATIONS §6): sizes from a divisible chain 1 | 2 | 4 | … | G, or whole
multiples of G, placed in non-increasing order each onto the fullest node that fits (whole empty
nodes for multiples of G), always land consolidated when their sum fits the cluster. While sizes
decrease, every node's free count stays a multiple of the current size, so any node with room has
room for the whole job; multiples of G only ever see full or empty nodes.
"""

from __future__ import annotations

import numpy as np

from apportion.solver.arraytypes import IntArray

Placement = dict[int, int]  # node index → GPUs


class PlacementError(RuntimeError):
    """Sizes that do not fit (never raised for round-up sizes whose sum fits the cluster)."""


def place_consolidated(sizes: IntArray, free: IntArray, gpus_per_node: int) -> list[Placement]:
    """Place each size consolidated; `free` (GPUs free per node) is updated in place."""
    out: list[Placement] = [{} for _ in range(len(sizes))]
    for i in np.argsort(-np.asarray(sizes), kind="stable"):
        size = int(sizes[i])
        if size >= gpus_per_node:
            whole = size // gpus_per_node
            empty = np.flatnonzero(free == gpus_per_node)[:whole]
            if whole * gpus_per_node != size or empty.size < whole:
                raise PlacementError(f"no {whole} empty nodes for a job of {size} GPUs")
            free[empty] = 0
            out[i] = {int(n): gpus_per_node for n in empty}
            continue
        fits = np.flatnonzero(free >= size)
        if fits.size == 0:
            raise PlacementError(f"no node has {size} GPUs free")
        node = int(fits[np.argmin(free[fits])])  # the fullest node that fits
        free[node] -= size
        out[i] = {node: size}
    return out


def shrink(block: Placement, used: int, free: IntArray) -> Placement:
    """Keep `used` GPUs of a reserved block (its nodes in order), give the rest back to `free`."""
    kept: Placement = {}
    for node, gpus in sorted(block.items()):
        take = min(gpus, used)
        if take:
            kept[node] = take
        free[node] += gpus - take
        used -= take
    return kept


def fit(gpus: int, free: IntArray, gpus_per_node: int, allow_split: bool) -> Placement | None:
    """A low-fragmentation spot for `gpus`, taken from `free`, or None.

    Whole empty nodes for each full G, the best-fitting (fullest) node for the remainder; failing
    that, and if allowed, the nodes with the most free GPUs (fewest nodes)."""
    if gpus > free.sum():
        return None
    whole, rest = divmod(gpus, gpus_per_node)
    empty = np.flatnonzero(free == gpus_per_node)
    if empty.size >= whole:
        chosen = {int(n): gpus_per_node for n in empty[:whole]}
        if rest:
            fits = np.flatnonzero(free >= rest)
            fits = fits[~np.isin(fits, empty[:whole])]
            if fits.size:
                chosen[int(fits[np.argmin(free[fits])])] = rest
            else:
                chosen = {}
        if chosen:
            _take(chosen, free)
            return chosen
    if not allow_split:
        return None
    chosen = {}
    for n in np.argsort(-free, kind="stable"):
        take = int(min(free[n], gpus - sum(chosen.values())))
        if take <= 0:
            break
        chosen[int(n)] = take
    _take(chosen, free)
    return chosen


def _take(chosen: Placement, free: IntArray) -> None:
    for node, gpus in chosen.items():
        free[node] -= gpus


def fill(
    demand: IntArray, order: IntArray, free: IntArray, gpus_per_node: int, allow_split: bool
) -> dict[int, Placement]:
    """Jobs in `order` take spare GPUs where they fit; a job that does not fit is skipped
    (smaller ones behind it may still fit)."""
    placed: dict[int, Placement] = {}
    for j in order:
        if free.sum() == 0:
            break
        spot = fit(int(demand[j]), free, gpus_per_node, allow_split)
        if spot is not None:
            placed[int(j)] = spot
    return placed
