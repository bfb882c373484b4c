"""Elastic configurations enacted on nodes: each job's (GPU type, GPUs, nodes) becomes GPUs on
named nodes of its type.

Per type, a job whose configuration did not change keeps the nodes it held (no restart). The
others are placed largest first: a configuration on one node goes to the node with the least
free GPUs that holds it (best fit); one on n nodes takes n nodes with room for an even share,
fullest-free first. Node shapes of Sia (1, 2, 4, … GPUs on one node, whole nodes beyond) divide
each other and the node size, so best-fit-decreasing places them whenever their GPUs fit the
type's count; if keeping placements fragments the nodes so that a configuration no longer fits,
the whole type is placed again from scratch and the jobs that land elsewhere are `moved` (they
restart). A configuration that still does not fit (irregular shapes or node sizes) is named in
`unplaced`, never dropped silently.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

Placement = dict[str, int]


@dataclass(frozen=True)
class Want:
    """The configuration a job is to run in."""

    gpu_type: str
    gpus: int
    nodes: int = 1


@dataclass
class Placed:
    placements: dict[str, Placement] = field(default_factory=dict)
    moved: list[str] = field(default_factory=list)  # same configuration, other nodes
    unplaced: list[str] = field(default_factory=list)


def place(
    nodes: Sequence[tuple[str, int, str]],
    wanted: Mapping[str, Want],
    previous: Mapping[str, Placement],
) -> Placed:
    """`nodes`: (id, GPUs, GPU type); `wanted`: job → configuration; `previous`: the nodes each
    job held. Returns every job's nodes (see the module)."""
    out = Placed()
    for gpu_type in dict.fromkeys(n[2] for n in nodes):
        mine = {j: w for j, w in wanted.items() if w.gpu_type == gpu_type}
        free = {n[0]: n[1] for n in nodes if n[2] == gpu_type}
        kept = {j: previous[j] for j in mine if _same(previous.get(j), mine[j], free)}
        placed, missing = _pack(dict(free), mine, kept)
        if missing:  # fragmented by what was kept: place everything of this type afresh
            placed, missing = _pack(dict(free), mine, {})
            out.moved += [j for j in kept if placed.get(j) != kept[j]]
        out.placements.update(placed)
        out.unplaced += missing
    return out


def _same(before: Placement | None, want: Want, free: Mapping[str, int]) -> bool:
    return (
        before is not None
        and all(node in free for node in before)
        and sum(before.values()) == want.gpus
        and len(before) == want.nodes
    )


def _pack(
    free: dict[str, int], wanted: Mapping[str, Want], kept: Mapping[str, Placement]
) -> tuple[dict[str, Placement], list[str]]:
    placed: dict[str, Placement] = {}
    for job, held in kept.items():
        for node, gpus in held.items():
            free[node] -= gpus
        placed[job] = dict(held)
    missing = []
    order = sorted((j for j in wanted if j not in kept), key=lambda j: (-wanted[j].gpus, j))
    for job in order:
        got = _one(free, wanted[job])
        if got is None:
            missing.append(job)
            continue
        for node, gpus in got.items():
            free[node] -= gpus
        placed[job] = got
    return placed, missing


def _one(free: Mapping[str, int], want: Want) -> Placement | None:
    if want.nodes == 1:
        fits = [n for n, g in free.items() if g >= want.gpus]
        if not fits:
            return None
        return {min(fits, key=lambda n: (free[n], n)): want.gpus}
    share, extra = divmod(want.gpus, want.nodes)
    room = sorted((n for n, g in free.items() if g >= share + (1 if extra else 0)),
                  key=lambda n: (-free[n], n))  # fmt: skip
    if len(room) < want.nodes:
        return None
    return {n: share + (1 if i < extra else 0) for i, n in enumerate(room[: want.nodes])}
