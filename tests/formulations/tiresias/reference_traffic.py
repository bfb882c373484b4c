"""An independent reference for `network_load_placement`, from Tiresias's appendix and
FORMULATIONS §10d alone: every placement of a job's workers and parameter servers tried.

A job of W workers has W parameter servers; its tensors are dealt round-robin (tensor i to PS
i mod W), so PS k holds s_k. Every worker exchanges each PS's share with it: a worker on node n
and PS k on node m ≠ n put s_k on both nodes' network, nothing when they share a node. A PS sits
on one of its job's worker nodes; a running job's PS k on its worker k's node (workers counted
in the snapshot's node order). Waiting jobs are placed one at a time by arrival (then snapshot
order) on the first type they have throughput on with enough free GPUs, whole or not at all; a
job with tensors and ≥ 2 GPUs so that the most loaded node carries the least traffic, then the
most traffic stays inside nodes (Σ s_k · workers on PS k's node).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any

from tests.formulations.tiresias.reference import INF, Snap, node_kind, usable

Load = tuple[Fraction, ...]


def shares(tensors: list[float], workers: int) -> list[Fraction]:
    out = [Fraction(0)] * workers
    for i, size in enumerate(tensors):
        out[i % workers] += Fraction(size)
    return out


def traffic(n: int, worker_at: list[int], ps_at: list[int], share: list[Fraction]) -> Load:
    """Each node's traffic from every (worker, PS) pair on different nodes."""
    out = [Fraction(0)] * n
    for w in worker_at:
        for p, s in zip(ps_at, share, strict=True):
            if w != p:
                out[w] += s
                out[p] += s
    return tuple(out)


def running_load(snap: Snap) -> Load:
    ids = [node["id"] for node in snap["nodes"]]
    total: Load = tuple(Fraction(0) for _ in ids)
    for job in snap["jobs"]:
        tensors = job.get("tensor_sizes")
        if "placement" not in job or not tensors or job["scale_factor"] < 2:
            continue
        worker_at = [i for i, node in enumerate(ids) for _ in range(job["placement"].get(node, 0))]
        share = shares(tensors, len(worker_at))
        added = traffic(len(ids), worker_at, worker_at, share)
        total = tuple(a + b for a, b in zip(total, added, strict=True))
    return total


def optima(
    free: list[int], base: Load, gang: int, tensors: list[float], tie_break: bool
) -> tuple[tuple[Fraction, Fraction], list[tuple[tuple[int, ...], Load]]]:
    """(least max load, then most traffic inside) and every (workers per node, load after)
    reaching it."""
    share = shares(tensors, gang)
    carried = [s for s in share if s > 0]
    found: list[tuple[tuple[Fraction, Fraction], tuple[int, ...], Load]] = []
    for w in itertools.product(*(range(f + 1) for f in free)):
        if sum(w) != gang:
            continue
        worker_at = [n for n, c in enumerate(w) for _ in range(c)]
        hosts = [n for n, c in enumerate(w) if c]
        for ps_at in itertools.product(hosts, repeat=len(carried)):
            added = traffic(len(free), worker_at, list(ps_at), carried)
            after = tuple(a + b for a, b in zip(base, added, strict=True))
            inside = sum((s * w[p] for s, p in zip(carried, ps_at, strict=True)), Fraction(0))
            found.append(((max(after), -inside if tie_break else Fraction(0)), w, after))
    best = min(key for key, _, _ in found)
    return (best[0], -best[1]), [(w, after) for key, w, after in found if key == best]


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-6)


def check_network(snap: Snap, result: Any, tie_break: bool = True) -> None:
    """Assert the answer is one the rules allow, job after job, each placement optimal on
    what the earlier ones left (any of their optimal PS layouts)."""
    ids, kinds = [n["id"] for n in snap["nodes"]], node_kind(snap)
    jobs, got = snap["jobs"], {j.id: j for j in result.jobs}
    free = [
        n["gpus"] - sum(j.get("placement", {}).get(n["id"], 0) for j in jobs) for n in snap["nodes"]
    ]
    states = {running_load(snap)}
    order = sorted(
        (i for i, j in enumerate(jobs) if "placement" not in j),
        key=lambda i: (INF if jobs[i].get("arrival_time") is None else jobs[i]["arrival_time"], i),
    )
    for i in order:
        job, answer = jobs[i], got[jobs[i]["id"]]
        g = job["scale_factor"]
        fits = [
            t
            for t in usable(snap, job)
            if sum(f for f, k in zip(free, kinds, strict=True) if k == t) >= g
        ]
        if not fits:
            assert answer.placement is None and answer.reason, f"{job['id']} cannot start"
            continue
        assert answer.placement is not None, f"{job['id']} fits {fits[0]} but waits"
        spot = tuple(answer.placement.get(n, 0) for n in ids)
        assert sum(spot) == g and all(s <= f for s, f in zip(spot, free, strict=True))
        assert all(k == fits[0] for s, k in zip(spot, kinds, strict=True) if s)
        if g >= 2 and job.get("tensor_sizes"):
            room = [f if k == fits[0] else 0 for f, k in zip(free, kinds, strict=True)]
            states = _after(states, room, spot, job, answer.metrics, tie_break)
        free = [f - s for f, s in zip(free, spot, strict=True)]
    assert any(close(result.objective, float(max(s, default=0))) for s in states)


def _after(
    states: set[Load],
    room: list[int],
    spot: tuple[int, ...],
    job: dict[str, Any],
    metrics: dict[str, Any],
    tie_break: bool,
) -> set[Load]:
    """The loads the job's optimal placements on `spot` may leave, from any earlier state
    whose optimum the answer's reaches."""
    after: set[Load] = set()
    for base in states:
        (load, inside), winners = optima(
            room, base, job["scale_factor"], job["tensor_sizes"], tie_break
        )
        if not close(metrics["max_network_load"], float(load)):
            continue
        if tie_break and not close(metrics["traffic_inside"], float(inside)):
            continue
        after |= {left for w, left in winners if w == spot}
    assert after, f"{job['id']}: not an optimal placement on what the jobs before it left"
    return after
