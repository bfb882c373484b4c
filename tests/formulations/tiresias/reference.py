"""An independent reference for the Tiresias policies, written from FORMULATIONS §10 and the
Tiresias paper (NSDI'19, §3 and its appendix) alone, sharing nothing with the policies' code:
on a tiny snapshot, every decision is enumerated and scored from the definitions, in exact
arithmetic where the data allow.

- Queues: a job with attained service a is in queue i when θ_i ≤ a < θ_{i+1}; a waiting job
  below the top that has run and waited δ ≥ knob · a / g is promoted (a reset to 0).
- Order within a queue: 2D-Gittins by the index G(a, Δ), highest first; then (every 2D-LAS
  job) by the caller's `queue_order` (missing, or promoted by this answer: last), then running
  jobs before waiting ones, then first start (never started after), then arrival, then the
  snapshot's order.
- A decision keeps or stops each running job (never moves it) and leaves each waiting job
  waiting or places its whole gang on nodes of one type it has throughput on; a consolidated
  gang (≥ 2 GPUs, `consolidate` or largest tensor > pack_limit of the model) on at most the
  fewest nodes of that type whose GPUs hold it; no node over its GPUs; at most
  `max_preemptions` running jobs stopped.
- Its score, compared lexicographically: the jobs running in each queue, top first; minus the
  preemption cost Σ g_r · (overhead or preemption_cost) over the stopped; the priority
  Σ (n_q − rank) over the jobs running, rank and n_q counting only jobs that can run at all.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

Snap = dict[str, Any]
Spot = tuple[int, ...]  # GPUs per node (snapshot node order)
INF = math.inf


def node_kind(snap: Snap) -> list[str]:
    """Each node's GPU type (untyped nodes: `gpu`)."""
    return [n.get("gpu_type") or "gpu" for n in snap["nodes"]]


def type_names(snap: Snap) -> list[str]:
    """The snapshot's GPU types in its order (from its nodes when it lists none)."""
    if snap.get("gpu_types"):
        return [g["name"] for g in snap["gpu_types"]]
    return list(dict.fromkeys(node_kind(snap)))


def fewest(sizes: list[int], gang: int) -> int:
    """The fewest of these nodes whose GPUs add up to `gang` (0: they cannot)."""
    total = 0
    for count, size in enumerate(sorted(sizes, reverse=True), start=1):
        total += size
        if total >= gang:
            return count
    return 0


def consolidated(job: dict[str, Any], pack_limit: float) -> bool:
    tensors = job.get("tensor_sizes") or []
    skewed = bool(tensors) and Fraction(max(tensors)) / sum(map(Fraction, tensors)) > pack_limit
    return job["scale_factor"] >= 2 and (bool(job.get("consolidate")) or skewed)


def usable(snap: Snap, job: dict[str, Any]) -> list[str]:
    """The types, in the snapshot's order, the job has throughput on and whose GPUs hold it."""
    kinds = node_kind(snap)
    out = []
    for t in type_names(snap):
        total = sum(n["gpus"] for n, k in zip(snap["nodes"], kinds, strict=True) if k == t)
        if job["throughput"].get(t, 0.0) > 0 and total >= job["scale_factor"]:
            out.append(t)
    return out


def can_run(snap: Snap, job: dict[str, Any]) -> bool:
    return "placement" in job or bool(usable(snap, job))


def queues_of(snap: Snap, options: dict[str, Any]) -> tuple[list[int], list[float]]:
    """Each job's queue and attained service after promotion."""
    limits = options.get("thresholds", [3200.0])
    knob = options.get("promote_knob")
    queue, attained = [], []
    for job in snap["jobs"]:
        a = job.get("attained_service", 0.0)
        q = sum(1 for x in limits if a >= x)
        waited = job.get("pending_seconds", 0.0)
        starving = knob is not None and "placement" not in job and q > 0 and a > 0
        if starving and waited >= knob * a / job["scale_factor"]:
            q, a = 0, 0.0
        queue.append(q)
        attained.append(a)
    return queue, attained


def gittins(samples: list[float], a: float, delta: float) -> Fraction:
    """P(S − a ≤ Δ | S > a) / E[min(S − a, Δ) | S > a] over the samples (0 past them all)."""
    rest = [Fraction(s) - Fraction(a) for s in samples if s > a]
    if not rest:
        return Fraction(0)
    done = sum(1 for r in rest if delta == INF or r <= Fraction(delta))
    spent = sum((r if delta == INF else min(r, Fraction(delta))) for r in rest)
    return Fraction(done) / spent if spent > 0 else Fraction(0)


def index_of(snap: Snap, options: dict[str, Any], queue: list[int], a: list[float]) -> list[Any]:
    """2D-Gittins: each job's index; the quantum runs to its queue's limit, or every Δ."""
    samples = snap["service_distribution"]["samples"]
    limits = [*options.get("thresholds", [3200.0]), INF]
    out = []
    for q, att in zip(queue, a, strict=True):
        if options.get("quantum") == "sup":
            out.append(
                max([gittins(samples, att, s - att) for s in samples if s > att] or [Fraction(0)])
            )
        else:
            out.append(gittins(samples, att, limits[q] - att))
    return out


def ranks(
    snap: Snap, options: dict[str, Any], queue: list[int], index: list[Any] | None
) -> list[int]:
    """Each job's place in its queue among the jobs that can run (−1 for the others)."""
    jobs = snap["jobs"]
    limits = options.get("thresholds", [3200.0])
    # A job whose queue is not the one its attained service names was promoted: it joins the
    # top queue's back, whatever place it held below.
    moved = [
        queue[i] != sum(1 for x in limits if j.get("attained_service", 0.0) >= x)
        for i, j in enumerate(jobs)
    ]

    def key(i: int) -> tuple[Any, ...]:
        job = jobs[i]
        place = job.get("queue_order")
        place = INF if place is None or moved[i] else place
        started, arrival = job.get("started_at"), job.get("arrival_time")
        first = (-index[i],) if index is not None else ()
        waits = "placement" not in job
        return (
            *first,
            place,
            waits,
            INF if started is None else started,
            INF if arrival is None else arrival,
            i,
        )

    rank = [-1] * len(jobs)
    for q in set(queue):
        members = [i for i in range(len(jobs)) if queue[i] == q and can_run(snap, jobs[i])]
        for place, i in enumerate(sorted(members, key=key)):
            rank[i] = place
    return rank


def splits(sizes: list[int], gang: int, most: int) -> Iterator[Spot]:
    for split in itertools.product(*(range(min(s, gang) + 1) for s in sizes)):
        if sum(split) == gang and sum(1 for x in split if x) <= most:
            yield split


def choices(snap: Snap, job: dict[str, Any], pack_limit: float) -> list[Spot | None]:
    """Every way the job may be in a decision: stopped or waiting (None), or where it runs."""
    ids = [n["id"] for n in snap["nodes"]]
    if "placement" in job:
        return [None, tuple(job["placement"].get(n, 0) for n in ids)]
    out: list[Spot | None] = [None]
    kinds = node_kind(snap)
    for t in usable(snap, job):
        sizes = [n["gpus"] if k == t else 0 for n, k in zip(snap["nodes"], kinds, strict=True)]
        own = [s for s, k in zip(sizes, kinds, strict=True) if k == t]
        g = job["scale_factor"]
        most = fewest(own, g) if consolidated(job, pack_limit) else len(sizes)
        out.extend(splits(sizes, g, most))
    return out


def decisions(snap: Snap, pack_limit: float) -> Iterator[list[Spot | None]]:
    """Every decision whose nodes hold what it places (depth first, full nodes pruned)."""
    options = [choices(snap, job, pack_limit) for job in snap["jobs"]]
    room = [n["gpus"] for n in snap["nodes"]]

    def walk(i: int, free: list[int], made: list[Spot | None]) -> Iterator[list[Spot | None]]:
        if i == len(options):
            yield list(made)
            return
        for spot in options[i]:
            left = free if spot is None else [f - s for f, s in zip(free, spot, strict=True)]
            if min(left, default=0) >= 0:
                yield from walk(i + 1, left, [*made, spot])

    yield from walk(0, room, [])


def score(
    snap: Snap, options: dict[str, Any], runs: list[bool], queue: list[int], rank: list[int]
) -> tuple[Any, ...]:
    jobs = snap["jobs"]
    count = len(options.get("thresholds", [3200.0])) + 1
    per_queue = [sum(1 for i, r in enumerate(runs) if r and queue[i] == q) for q in range(count)]
    lost = Fraction(0)
    for job, r in zip(jobs, runs, strict=True):
        if "placement" in job and not r:
            own = job.get("overhead_seconds")
            seconds = options.get("preemption_cost", 0.0) if own is None else own
            lost += Fraction(seconds) * job["scale_factor"]
    size = [
        sum(1 for i in range(len(jobs)) if queue[i] == q and rank[i] >= 0) for q in range(count)
    ]
    priority = sum(size[queue[i]] - rank[i] for i, r in enumerate(runs) if r)
    return (*per_queue, -lost, priority)


def best_admission(snap: Snap, options: dict[str, Any], gittins_policy: bool) -> tuple[Any, ...]:
    """The best score over every decision the rules allow (§10b)."""
    queue, attained = queues_of(snap, options)
    index = index_of(snap, options, queue, attained) if gittins_policy else None
    rank = ranks(snap, options, queue, index)
    cap = options.get("max_preemptions")
    pack_limit = options.get("pack_limit", 0.5)
    top: tuple[Any, ...] | None = None
    for made in decisions(snap, pack_limit):
        stopped = sum(
            1 for j, s in zip(snap["jobs"], made, strict=True) if "placement" in j and not s
        )
        if cap is not None and stopped > cap:
            continue
        value = score(snap, options, [s is not None for s in made], queue, rank)
        top = value if top is None or value > top else top
    assert top is not None  # stopping nothing and starting nothing is always allowed
    return top


def answer_score(
    snap: Snap, options: dict[str, Any], runs: list[bool], gittins_policy: bool
) -> tuple[Any, ...]:
    """The score of a decision given by who runs."""
    queue, attained = queues_of(snap, options)
    index = index_of(snap, options, queue, attained) if gittins_policy else None
    return score(snap, options, runs, queue, ranks(snap, options, queue, index))
