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

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
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
    used = np.add.reduce(combos.got * combos.scale[:, None], axis=0)
    has, capacity = cluster.served
    busiest = float(np.maximum.reduce((used if has is None else used[has]) / capacity, initial=0.0))
    return max(float(np.maximum.reduce(combos.received_total, initial=0.0)), busiest)


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
    rows, types, (spare, group, flat) = combos.queues
    if type_rank is not None:
        group = type_rank[types] * 2 + spare
    # The queues come sorted by A_ck (descending), then row: a stable sort by type, then
    # priority-0 last (`group`), then priority keeps that order among equals.
    keys = np.lexsort((-priority.take(flat), group))
    return rows[keys], types[keys]


class Chosen(NamedTuple):
    """A row that runs this round, on a type, with the priority it was served at (a tuple:
    a round makes dozens of these)."""

    row: int
    gpu_type: int
    priority: float


@dataclass  # made every round: not frozen, whose guard costs per field
class Selection:
    """The rows that run and their types (`rows[i]` on `types[i]`, in serving order), the
    round's priorities (rows × types: an entry without time has 0), the GPUs left per type,
    and why jobs were refused."""

    rows: list[int]
    types: list[int]
    priority: FloatArray
    free: IntArray  # GPUs left per type
    reasons: dict[int, str]  # job row -> why its highest-priority entry was refused

    @cached_property
    def chosen(self) -> tuple[Chosen, ...]:
        """The same as (row, type, priority served at) tuples, in serving order."""
        served = self.priority[self.rows, self.types].tolist()
        return tuple(map(Chosen._make, zip(self.rows, self.types, served, strict=True)))


def select(
    combos: Combos,
    cluster: Cluster,
    priority: FloatArray,
    order: Order = Order.PRIORITY,
    type_rank: IntArray | None = None,
    why: bool = True,
) -> Selection:
    """Serve entries in `order`: a job runs at most once (alone or in one pair), and a row
    runs on type k only if k still has its whole gang of GPUs free. Whether the gang then fits
    on the nodes is not a question: a gang may span nodes, so a count that fits places.
    `why=False` leaves the refused jobs' reasons out (a caller that only reads who runs)."""
    rows, types = serving_order(combos, priority, order, type_rank)
    free = cluster.capacity.tolist()
    running = [False] * combos.num_jobs
    reasons: dict[int, str] = {}
    serve = _serve_why(combos, cluster, free, running, reasons) if why else None
    scale, member_rows, m = combos.scale_list, combos.rows, combos.num_jobs
    left = sum(free)
    picked_rows: list[int] = []
    picked_types: list[int] = []
    for c, k in zip(rows.tolist(), types.tolist(), strict=True):
        s = scale[c]
        if serve is not None:
            if not serve(c, k, s):
                continue
        elif s > free[k]:
            continue
        elif c < m:  # a job alone, the usual entry
            if running[c]:
                continue
            running[c] = True
        else:
            a, b = member_rows[c]
            if running[a] or running[b]:
                continue
            running[a] = running[b] = True
        free[k] -= s
        picked_rows.append(c)
        picked_types.append(k)
        left -= s
        if not left:
            break  # a full cluster: the remaining entries can only wait
    return Selection(picked_rows, picked_types, priority, np.array(free, dtype=np.int64), reasons)


def _serve_why(
    combos: Combos,
    cluster: Cluster,
    free: list[int],
    running: list[bool],
    reasons: dict[int, str],
) -> Callable[[int, int, int], bool]:
    """Whether an entry (row c on type k, gang s) runs, noting why a job's first refused entry
    was refused; marks the row's jobs as running."""
    capacity = cluster.capacity.tolist()
    names, member_rows, m = cluster.type_names, combos.rows, combos.num_jobs
    # One text per (type, gang, GPUs left): most refused entries share one.
    texts: dict[tuple[int, int, int], str] = {}

    def serve(c: int, k: int, s: int) -> bool:
        if c < m:
            if running[c]:
                return False
            if s > free[k]:
                if c not in reasons:
                    reasons[c] = _refused(texts, names, k, s, free[k], capacity[k])
                return False
            running[c] = True
            return True
        members = member_rows[c]
        if running[members[0]] or running[members[1]]:
            _partner_reason(combos, members, running, reasons)
            return False
        if s > free[k]:
            if any(j not in reasons for j in members):
                why = _refused(texts, names, k, s, free[k], capacity[k])
                for j in members:
                    reasons.setdefault(j, why)
            return False
        for j in members:
            running[j] = True
        return True

    return serve


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
