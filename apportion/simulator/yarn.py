"""YARN-CS, the production baseline Tiresias measures against (NSDI'19 §5): Apache YARN's
Capacity Scheduler as Microsoft ran it for deep learning, a FIFO queue with strict
consolidation and no preemption.

Jobs start in arrival order, each on the fewest nodes, or not at all: a gang of g ≤ G GPUs (G a
node's GPUs) on the first node in node order with g GPUs free; a larger one on ⌊g/G⌋ wholly
free nodes plus, for the rest, the first other node with that many free (Tiresias's simulator,
`ms_yarn_placement`). The first job that cannot start blocks every later one (head-of-line
blocking: what Tiresias's "Best-effort" baseline removes, and `backfill` here). Running jobs
are never stopped. It answers with placements, so it needs nodes and running placements in its
snapshot: schedule or placement enactment.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from apportion.simulator.clients import PolicyError, Reply, Request

Placement = dict[str, int]


class YarnCapacity:
    baseline = True

    def __init__(self, name: str, options: Mapping[str, Any]) -> None:
        self.name = name
        unknown = set(options) - {"backfill"}
        if unknown:
            raise ValueError(f"{name}: unknown options {', '.join(sorted(unknown))}; use backfill")
        self.backfill = bool(options.get("backfill", False))

    def decide(self, request: Request) -> Reply:
        started = time.perf_counter()
        document = request.document
        nodes = document.get("nodes")
        if not nodes:
            raise PolicyError(f"{self.name} places gangs on nodes: use schedule or placement mode")
        free = {n["id"]: n["gpus"] for n in nodes}
        kind = {n["id"]: n.get("gpu_type") for n in nodes}
        running = [job for job in document["jobs"] if "placement" in job]
        table = request.table
        if len(running) < int((table.cur_type[request.jobs] >= 0).sum()):
            raise PolicyError(f"{self.name} needs running placements: use schedule mode")
        answer = Reply(status="optimal")
        for job in running:
            _hold(answer, job, job["placement"], kind, free)
        waiting = [job for job in document["jobs"] if "placement" not in job]
        waiting.sort(key=lambda job: job.get("arrival_time", 0.0))
        size = max(n["gpus"] for n in nodes)
        for job in waiting:
            gang, types = int(job["scale_factor"]), set(job["throughput"])
            placement = consolidated(free, gang, size, types, kind)
            if placement is not None:
                _hold(answer, job, placement, kind, free)
            elif not self.backfill:
                break
        answer.seconds = answer.solver_seconds = time.perf_counter() - started
        return answer

    def close(self) -> None:
        return None


def consolidated(
    free: Mapping[str, int],
    gang: int,
    node_size: int,
    types: set[str],
    kind: Mapping[str, str | None],
) -> Placement | None:
    """YARN's consolidated placement on nodes of a type the job runs on, or None."""
    usable = [n for n in free if kind[n] is None or kind[n] in types]
    if gang <= node_size:
        first = next((n for n in usable if free[n] >= gang), None)
        return None if first is None else {first: gang}
    whole, rest = divmod(gang, node_size)
    idle = [n for n in usable if free[n] == node_size][:whole]
    if len(idle) < whole:
        return None
    placement = dict.fromkeys(idle, node_size)
    if rest:
        last = next((n for n in usable if n not in placement and free[n] >= rest), None)
        if last is None:
            return None
        placement[last] = rest
    return placement


def _hold(
    answer: Reply,
    job: Mapping[str, Any],
    placement: Placement,
    kind: Mapping[str, str | None],
    free: dict[str, int],
) -> None:
    for node, gpus in placement.items():
        free[node] -= gpus
    gpu_type = kind[next(iter(placement))] or next(iter(job["throughput"]))
    answer.allocation[job["id"]] = {gpu_type: 1.0}
    answer.placement[job["id"]] = dict(placement)
