"""Priorities and the serving order of a round (Gavel's round-based mechanism).

For every row c (a job, or a space-sharing pair) and GPU type k with target time fraction
A_ck > 0 (X_jk for a job, Y_pk for a pair) and received seconds g_ck as that row:

    f_ck = g_ck / T                     (the fraction of the elapsed time T it ran on k)
    priority_ck = A_ck / f_ck = T·A_ck / g_ck,     and +∞ when g_ck = 0.

Entries are served by priority, highest first; ties go to the larger A_ck, then to the earlier
row (snapshot job order, then pairs in the order given), then to the earlier GPU type (snapshot
order). T only scales priorities (the order is that of A_ck / g_ck), so a default T does not
change who runs; see `elapsed_time`.

The `deficit` rule serves instead the entries furthest behind their share at the end of the
round, were they not served (seconds, L the round length):

    priority_ck = A_ck·(T + L) − g_ck

Gavel's ratio lets a job that lost a round to the +∞ priorities of new entries stay behind
while others catch up; the deficit counts that loss in seconds, so it is repaid first. On one
GPU type this keeps every one-GPU job within one round of A_ck·T (a full type: either way).
On several types it keeps no bound: a job behind on two types at once runs on one of them
per round and falls further behind on the other, and a greedy pick of types can leave a GPU
idle while a job owed every round waits, a round never repaid. What it keeps holds round by
round: an entry that waits found its type full of entries served at priorities at least its
own, or its job running on such an entry (tests/mechanism/test_convergence.py).

Two serving orders (`Order`):
- `priority`: one queue of the entries with time, by priority as above. A job runs only where
  the allocation gives it time; this is what keeps each job's time on each type near A_ck·T.
- `types`: Gavel's scheduler, a queue per GPU type served one after another, fastest type
  first (`Targets.type_rank`), each queue by priority. A job behind on a fast and on a slow
  type then runs on the fast one this round (in one queue, the slow entry may come first and
  leave the fast GPU to a job further down), so more of each round's work lands on fast GPUs.
  As in Gavel, a type's queue ends with entries at priority 0 that its GPUs serve only when
  every entry with time there has been tried: jobs moving up to a type at least as fast as
  the slowest type they have time on, and jobs whose time is all where they make no progress
  (`Targets.spare`). GPUs then idle only when no such job is left.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple

import numpy as np

from apportion.mechanism.arrays import Cluster, Combos
from apportion.solver.arraytypes import FloatArray, IntArray


def elapsed_time(combos: Combos, cluster: Cluster, elapsed: float | None) -> float:
    """T: the caller's elapsed seconds, else the least the received times imply,

        T = max( max_j Σ_k received_jk,  max_k Σ_c s_c g_ck / N_k )

    (no job runs on two types at once, and type k delivers at most N_k GPU-seconds a second):
    exact whenever some job has run every round, or some type has been full every round,
    since `received` started counting."""
    if elapsed is not None:
        return float(elapsed)
    used = (combos.got * combos.scale[:, None]).sum(axis=0)
    has = cluster.capacity > 0
    busiest = float((used[has] / cluster.capacity[has]).max(initial=0.0))
    return max(float(combos.received_total.max(initial=0.0)), busiest)


class Order(StrEnum):
    """In what order a round's entries are served (module docstring)."""

    PRIORITY = "priority"  # one queue: the entries with time, by priority
    TYPES = "types"  # a queue per type, fastest first, each by priority


class Rule(StrEnum):
    """Which entries a round serves first."""

    GAVEL = "gavel"  # the largest A_ck / (g_ck / T): Gavel's rule
    DEFICIT = "deficit"  # the largest A_ck·(T + L) − g_ck: seconds behind after this round


def priorities(
    combos: Combos, elapsed: float, rule: Rule = Rule.GAVEL, round_seconds: float = 0.0
) -> FloatArray:
    """priority_ck for every row and type under `rule` (0 where the row has no time on k;
    serving order only looks at entries with time)."""
    target, got = combos.target, combos.got
    if rule is Rule.DEFICIT:
        return np.where(target > 0, target * (elapsed + round_seconds) - got, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(got > 0, elapsed * target / np.where(got > 0, got, 1.0), np.inf)
    return np.where(target > 0, ratio, 0.0)


def serving_order(
    combos: Combos,
    priority: FloatArray,
    order: Order = Order.PRIORITY,
    type_rank: IntArray | None = None,
) -> tuple[IntArray, IntArray]:
    """(rows, types) of every entry with time allocated, in the order they are served;
    `type_rank` (per type, its place) overrides the `types` order's fastest-first one."""
    if order is Order.TYPES:
        return _by_type(combos, priority, type_rank)
    rows, types = combos.entries  # by row, then type: np.nonzero's order
    # np.lexsort sorts by its last key first, stably: priority, then target (both descending),
    # and ties then keep the entries' order (job order, then type), deterministically.
    keys = np.lexsort((-combos.target[rows, types], -priority[rows, types]))
    return rows[keys].astype(np.int64, copy=False), types[keys].astype(np.int64, copy=False)


def _by_type(
    combos: Combos, priority: FloatArray, type_rank: IntArray | None = None
) -> tuple[IntArray, IntArray]:
    """Gavel's per-type queues, fastest type first (or in `type_rank`'s order): each type's
    entries with time by priority, then its priority-0 entries (`Targets.spare`) in job
    order."""
    rows, types, (target, spare, rank) = combos.queues
    if type_rank is not None:
        rank = type_rank[types]
    keys = np.lexsort((rows, target, -priority[rows, types], spare, rank))
    return rows[keys], types[keys]


class Chosen(NamedTuple):
    """A row that runs this round, on a type, with the priority it was served at (a tuple:
    a round makes dozens of these)."""

    row: int
    gpu_type: int
    priority: float


@dataclass(frozen=True)
class Selection:
    chosen: tuple[Chosen, ...]  # in serving order
    free: IntArray  # GPUs left per type
    reasons: dict[int, str]  # job row -> why its highest-priority entry was refused


def select(
    combos: Combos,
    cluster: Cluster,
    priority: FloatArray,
    order: Order = Order.PRIORITY,
    type_rank: IntArray | None = None,
) -> Selection:
    """Serve entries in `order`: a job runs at most once (alone or in one pair), and a row
    runs on type k only if k still has its whole gang of GPUs free. Whether the gang then fits
    on the nodes is not a question: a gang may span nodes, so a count that fits places."""
    rows, types = serving_order(combos, priority, order, type_rank)
    free = [int(v) for v in cluster.capacity]
    capacity = list(free)
    scale = combos.scale.tolist()
    running = [False] * combos.num_jobs
    reasons: dict[int, str] = {}
    chosen: list[Chosen] = []
    names, member_rows = cluster.type_names, combos.rows
    served = priority[rows, types].tolist()
    m = combos.num_jobs
    # One text per (type, gang, GPUs left): most refused entries share one.
    texts: dict[tuple[int, int, int], str] = {}
    for c, k, p in zip(rows.tolist(), types.tolist(), served, strict=True):
        s = scale[c]
        if c < m:  # a job alone, the usual entry
            if running[c]:
                continue
            if s > free[k]:
                if c not in reasons:
                    reasons[c] = _refused(texts, names, k, s, free[k], capacity[k])
                continue
            running[c] = True
        else:
            members = member_rows[c]
            if running[members[0]] or running[members[1]]:
                _partner_reason(combos, members, running, reasons)
                continue
            if s > free[k]:
                if any(j not in reasons for j in members):
                    why = _refused(texts, names, k, s, free[k], capacity[k])
                    for j in members:
                        reasons.setdefault(j, why)
                continue
            for j in members:
                running[j] = True
        free[k] -= s
        chosen.append(Chosen(c, k, p))
        if not any(free):
            break  # a full cluster: the remaining entries can only wait
    return Selection(tuple(chosen), np.array(free, dtype=np.int64), reasons)


def _refused(
    texts: dict[tuple[int, int, int], str],
    names: tuple[str, ...],
    k: int,
    scale: int,
    free: int,
    capacity: int,
) -> str:
    """Why a gang of `scale` does not run on type k with `free` GPUs left (made once per
    round for each such case)."""
    key = (k, scale, free)
    text = texts.get(key)
    if text is None:
        text = texts[key] = _capacity_reason(names[k], scale, free, capacity)
    return text


def _capacity_reason(name: str, scale: int, free: int, capacity: int) -> str:
    if scale > capacity:
        return f"needs {_gpus(scale)} at once; the nodes of {name!r} hold {capacity}"
    if free == 0:
        return f"every {name!r} GPU went to higher-priority jobs"
    left = "was" if free == 1 else "were"
    return f"only {free} {name!r} GPU{'' if free == 1 else 's'} {left} left for its gang of {scale}"


def _gpus(count: int) -> str:
    return f"{count} GPU" if count == 1 else f"{count} GPUs"


def _partner_reason(
    combos: Combos, members: tuple[int, ...], running: list[bool], reasons: dict[int, str]
) -> None:
    """A pair entry refused because one member already runs: say so for the other."""
    if len(members) != 2:
        return
    a, b = members
    for waiting, other in ((a, b), (b, a)):
        if not running[waiting] and running[other]:
            reasons.setdefault(
                waiting, f"its pair partner {combos.job_ids[other]!r} runs without it"
            )
