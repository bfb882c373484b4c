"""Where a round's configurations land on nodes, as Sia's simulator lays them out (its
`alloc_to_placement_fast`, smart placement off).

Every round afresh, type by type: the jobs by GPUs wanted, most first (ties in the order given);
a cursor over the type's nodes, kept from one job to the next, wraps around. A job takes whole
free nodes first (one pass from the cursor), then any free GPUs from the cursor on. A job may
so end up on more nodes than its configuration says (2 GPUs as 1 + 1 on two nodes): it then
runs, and is timed, on those nodes. A job moved to other nodes of the same shape keeps running
(`ElasticJob.place`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from apportion.mechanism.elastic import Want

#: node → GPUs, in the order the job took them
Held = dict[str, int]


def sia_layout(
    nodes: Sequence[tuple[str, int, str]], wanted: Mapping[str, Want]
) -> dict[str, Held]:
    """`nodes`: (id, GPUs, type) in the cluster's order; `wanted`: job → configuration, in the
    policy's job order. Every job whose GPUs are free gets its nodes (see the module)."""
    out: dict[str, Held] = {}
    for gpu_type in dict.fromkeys(n[2] for n in nodes):
        ids = [n[0] for n in nodes if n[2] == gpu_type]
        free = [n[1] for n in nodes if n[2] == gpu_type]
        mine = [(job, w.gpus) for job, w in wanted.items() if w.gpu_type == gpu_type and w.gpus]
        cursor = 0
        for job, gpus in sorted(mine, key=lambda item: -item[1]):
            if gpus > sum(free):
                continue
            held, cursor = _take(free, gpus, cursor, max(n[1] for n in nodes if n[2] == gpu_type))
            out[job] = {ids[i]: g for i, g in held.items()}
    return out


def _take(free: list[int], gpus: int, cursor: int, per_node: int) -> tuple[dict[int, int], int]:
    """Node index → GPUs taken from `free` (updated), and where the cursor stops."""
    held: dict[int, int] = {}
    node, count = cursor, len(free)
    whole = gpus // per_node
    for _ in range(count):
        if whole == 0:
            break
        if free[node] == per_node:
            held[node], free[node] = per_node, 0
            gpus -= per_node
            whole -= 1
        node = (node + 1) % count
    while gpus > 0:
        if free[node]:
            take = min(gpus, free[node])
            held[node] = held.get(node, 0) + take
            free[node] -= take
            gpus -= take
        node = (node + 1) % count
    return held, node
