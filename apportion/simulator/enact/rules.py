"""A trace's placement rules in the simulator (`trace.PlacementRules`): the shapes they allow,
the check every placement a policy answers with must pass, and how the jobs of a decider that
only ranks them (a baseline) are placed node by node.

Styles for ranked jobs (a baseline's `placement` option):

- `reference` (the default): DeepShare's baselines (`find_las_srtf_placement` in its
  simulator): the widest allowed shape first, on the lowest-numbered nodes with room;
- `pack`: the fewest nodes first, on the fullest nodes with room (best fit), which is as kind
  to contention as a contention-blind scheduler can be.

In rank order, a job that runs keeps its nodes while they are still free for it; any other job
takes the first shape that fits (later jobs may take what an earlier one could not use).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from apportion.simulator.clients import PolicyError
from apportion.simulator.enact.common import Placement
from apportion.simulator.state import JobStates
from apportion.simulator.trace import PlacementRules, Shape

STYLES = ("reference", "pack")


def shapes_by_demand(table: JobStates, rules: PlacementRules) -> dict[int, list[Shape]]:
    """The shapes each demand may take, as a placement policy's `shapes` option; raises
    ValueError when jobs of one demand are allowed different shapes (the option is per
    demand)."""
    node_gpus = max(node.gpus for node in table.trace.cluster.nodes)
    out: dict[int, list[Shape]] = {}
    for job in table.trace.jobs:
        allowed = list(rules.shapes(job, node_gpus))
        known = out.setdefault(job.scale_factor, allowed)
        if known != allowed:
            raise ValueError(
                f"trace {table.trace.name!r}: jobs of {job.scale_factor} GPUs may take "
                f"different shapes ({known} and {allowed} for {job.id}); a placement policy "
                "takes its shapes per demand"
            )
    return out


def check_placements(
    table: JobStates, rules: PlacementRules, placements: Mapping[int, Placement], policy: str
) -> None:
    """Raises PolicyError naming the first placement the rules forbid."""
    node_gpus = max(node.gpus for node in table.trace.cluster.nodes)
    for j, placement in placements.items():
        job = table.trace.jobs[j]
        per_node = set(placement.values())
        shape = (len(placement), next(iter(per_node)))
        if len(per_node) != 1 or shape not in rules.shapes(job, node_gpus):
            spread = " + ".join(str(g) for g in placement.values())
            raise PolicyError(
                f"policy {policy} placed {job.id} on {spread} GPUs of {len(placement)} nodes, "
                f"which the trace's placement rules forbid (allowed: "
                f"{', '.join(f'{k}x{p}' for k, p in rules.shapes(job, node_gpus))})"
            )


def place_ranked(
    table: JobStates,
    order: Sequence[int],
    held: Mapping[int, Placement],
    rules: PlacementRules,
    style: str,
) -> dict[int, Placement]:
    """The jobs of `order` (best first) that fit, each where the module docstring says."""
    nodes = table.trace.cluster.nodes
    free = {node.id: node.gpus for node in nodes}
    node_gpus = max(node.gpus for node in nodes)
    placed: dict[int, Placement] = {}
    for j in order:
        mine = held.get(j)
        if mine is None or any(free[n] < g for n, g in mine.items()):
            shapes = rules.shapes(table.trace.jobs[j], node_gpus)
            mine = _first_fit(shapes, free, style, [n.id for n in nodes])
        if mine is None:
            continue
        for node, gpus in mine.items():
            free[node] -= gpus
        placed[j] = dict(mine)
    return placed


def _first_fit(
    shapes: Sequence[Shape], free: Mapping[str, int], style: str, nodes: list[str]
) -> Placement | None:
    ordered = sorted(shapes, reverse=style == "reference")
    for k, p in ordered:
        room = [n for n in nodes if free[n] >= p]
        if style == "pack":
            room.sort(key=lambda n: free[n])  # stable: lower-numbered first among equals
        if len(room) >= k:
            return dict.fromkeys(room[:k], p)
    return None
