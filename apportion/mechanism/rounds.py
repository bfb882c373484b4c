"""Gavel's round-based mechanism: from an allocation X to the next round's jobs, nodes and GPUs.

A policy answers with time fractions X_jk (and, with space sharing, pair fractions Y_pk). Time
is cut into rounds; before each, `next_round` decides who runs where so that, over many rounds,
every job's time on every type approaches its share (Gavel, OSDI'20 §5).

Notation as in FORMULATIONS §0. Rows c are the jobs j and the pairs p = {a, b}; A_ck is X_jk or
Y_pk; g_ck the seconds row c has run on k *as that row* (a pair: together; a job: alone, i.e.
its received time on k minus its pairs' together-time there); T the elapsed seconds since
`received` started counting (`elapsed`; by default the least the received times imply,
max(max_j Σ_k received_jk, max_k Σ_c s_c g_ck / N_k)).

    priority_ck = A_ck / (g_ck / T)          (+∞ when g_ck = 0 < A_ck)

1. Entries (c, k) with A_ck > 0 are served by priority, highest first; ties to the larger A_ck,
   then the earlier row (snapshot job order, then pairs as given), then the earlier type.
2. An entry runs when none of its jobs runs yet this round and type k still has s_c GPUs free
   (s_c the gang size; a pair occupies its members' common scale factor once). Otherwise the
   next entry is tried, so a job refused on one type may still run on another, and smaller gangs
   fill what a large one could not use.
3. Placement (`mechanism.placement`): a row that runs on the type it ran on last round keeps
   exactly its GPUs (lease extension, `kept`); the others go largest gang first onto the fewest
   nodes of the type (one node when one has room, by best fit).

How time counts: a round of L seconds on type k adds L to `received[j][k]` of the job that ran
(alone or in a pair: each member held the GPUs for the whole round) and, for a pair, L to its
`PairShare.received[k]` too. Why time follows X: serving the smallest g_ck / A_ck first
equalizes g_ck / A_ck across the entries that run, so each row's time on k grows in proportion
to A_ck, as far as whole gangs allow. The rule is greedy, one round at a time: on heterogeneous
clusters a job can lag its share on a type by a few rounds, on some allocations by more every
round (a greedy pick of types can idle a GPU while a job waits that another pick would run),
and a job with spare time (Σ_k X_jk < 1) may use GPUs the others leave idle
(tests/mechanism/test_convergence.py).

A row with A_ck = 0 never runs on k: the allocation decides where a job may run, and a job with
no time anywhere does not run. Fractions below `NEGLIGIBLE` (a solver's round-off) count as 0, and
so do fractions on a type where the row makes no progress (its throughput there is 0: Gavel's
agnostic baseline allocates such time; `mechanism.arrays`): a job whose only time is there waits,
with that reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np

from apportion.mechanism.arrays import (
    NEGLIGIBLE,
    Allocation,
    Cluster,
    Combos,
    Spare,
    combos,
    targets,
)
from apportion.mechanism.backfill import backfill
from apportion.mechanism.checks import round_errors
from apportion.mechanism.placement import place
from apportion.mechanism.priority import Order, Rule, Selection, elapsed_time, priorities, select
from apportion.mechanism.types import Assignment, PairShare, Round
from apportion.solver.arraytypes import FloatArray, IntArray
from apportion.solver.errors import InputError
from apportion.solver.result import SolveResult
from apportion.solver.snapshot import Snapshot


def next_round(
    snapshot: Snapshot,
    allocation: Allocation,
    received: Mapping[str, Mapping[str, float]],
    previous: Mapping[str, Mapping[str, int]] | None = None,
    pairs: Sequence[PairShare] = (),
    *,
    elapsed: float | None = None,
    rule: Rule | str = Rule.GAVEL,
    round_seconds: float | None = None,
    order: Order | str = Order.PRIORITY,
    check: bool = True,
) -> Round:
    """The next round for `allocation` (job → GPU type → X_jk, or a result's `JobTable` as
    it is), given the seconds each job has
    `received` per type, the GPUs each job held last round (`previous`: job → node → GPUs) and
    the space-sharing `pairs`. `elapsed` is T, the seconds since `received` started counting
    (default: the least the received times imply; under Gavel's rule T scales the priorities,
    never the order). `rule` picks the priority (`mechanism.priority`); the `deficit` rule needs
    the round's length L, `round_seconds`; `order` the serving order (one queue by priority, or
    Gavel's queue per type). `check=False` skips validating the inputs, for a caller that builds
    them itself.
    Raises `InputError` naming each bad field from a request's root (`allocation`,
    `received`, `previous`, `pairs`, `elapsed`, `rule`, `round_seconds`, `order`;
    `snapshot.nodes` when there are none)."""
    if check:
        _check(snapshot, allocation, received, previous or {}, pairs, elapsed)
    planner = Planner(
        snapshot, allocation, pairs, rule=rule, round_seconds=round_seconds, order=order
    )
    return planner.next_round(received, previous, elapsed=elapsed)


class Planner:
    """`next_round` for one snapshot, allocation and set of pairs, round after round: what
    does not change between rounds is computed once (a simulator's or scheduler's loop). The
    pairs' `received` mappings are read at every round, so a caller may keep them current in
    place. Inputs are not checked: build it from checked parts, or call `next_round`.
    `cluster` is `Cluster.of(snapshot)` when the caller keeps one for the same nodes (a new
    planner per allocation on an unchanged cluster). `uncovered` (jobs the allocation was
    not computed for) run at priority 0 where its entries leave GPUs free with `backfill`;
    `spare` says which entries without time a `types` round serves (`arrays.Spare`)."""

    def __init__(
        self,
        snapshot: Snapshot,
        allocation: Allocation,
        pairs: Sequence[PairShare] = (),
        *,
        rule: Rule | str = Rule.GAVEL,
        round_seconds: float | None = None,
        cluster: Cluster | None = None,
        uncovered: Sequence[str] = (),
        backfill: bool = False,
        spare: Spare = Spare.UP,
        order: Order | str = Order.PRIORITY,
    ) -> None:
        self.rule = _rule(rule, round_seconds)
        self.order = _order(order)
        self.round_seconds = round_seconds or 0.0
        self.cluster = cluster or Cluster.of(snapshot)
        self.pairs = _clean_pairs(pairs)
        self.fixed = targets(
            snapshot, self.cluster.type_names, allocation, self.pairs, spare, uncovered
        )
        has_time = self.fixed.has_time
        late = [self.fixed.index[j] for j in uncovered if j in self.fixed.index]
        self.uncovered = [j for j in late if not has_time[j]] if backfill else []

    def next_round(
        self,
        received: Mapping[str, Mapping[str, float]] | FloatArray,
        previous: Mapping[str, Mapping[str, int]] | None = None,
        *,
        elapsed: float | None = None,
    ) -> Round:
        """The next round, given the time received so far (seconds per job and GPU type, or
        an array with a row per snapshot job and a column per GPU type, in the snapshot's
        orders) and last round's GPUs."""
        previous = previous or {}
        plan = self.plan(received, previous, elapsed=elapsed)
        cluster, rows, selection = self.cluster, plan.rows, plan.selection
        waiting, reasons = _waiting(rows, cluster, selection)
        return Round(
            assignments=_assignments(rows, cluster, selection, plan.placements, previous),
            idle=dict(zip(cluster.type_names, selection.free.tolist(), strict=True)),
            waiting=waiting,
            reasons=reasons,
            elapsed=plan.elapsed,
        )

    def plan(
        self,
        received: Mapping[str, Mapping[str, float]] | FloatArray,
        previous: Mapping[str, Mapping[str, int]] | None = None,
        *,
        elapsed: float | None = None,
        type_rank: IntArray | None = None,
        why: bool = True,
    ) -> Plan:
        """`next_round` before it is written out as assignments, for a caller that reads the
        chosen rows and their placements as they are (a simulator, round after round);
        `type_rank` orders the `types` queues this round (`priority.serving_order`);
        `why=False` leaves out why jobs wait (`Selection.reasons`)."""
        cluster = self.cluster
        if isinstance(received, np.ndarray):
            shape = (len(self.fixed.job_ids), len(cluster.type_names))
            if received.shape != shape or not np.isfinite(received).all():
                msg = f"an array of received seconds must be finite and of shape {shape}"
                raise InputError.single(("received",), msg)
        rows = combos(self.fixed, received, self.pairs)
        total = elapsed_time(rows, cluster, elapsed)
        priority = priorities(rows, total, self.rule, self.round_seconds)
        selection = select(rows, cluster, priority, self.order, type_rank, why)
        if self.uncovered:
            selection = backfill(selection, rows, self.fixed.speed, self.uncovered)
        placements = place(selection.rows, selection.types, rows, cluster, previous or {})
        return Plan(rows, selection, placements, total)


class Plan(NamedTuple):
    """A round as the mechanism decided it: the rows (`rows.rows[c]`: the snapshot jobs of row
    c), the selection (`chosen`: row, type, priority, in serving order), one placement per
    chosen row, and T."""

    rows: Combos
    selection: Selection
    placements: list[dict[str, int]]
    elapsed: float


def _check(
    snapshot: Snapshot,
    allocation: Allocation,
    received: Mapping[str, Mapping[str, float]],
    previous: Mapping[str, Mapping[str, int]],
    pairs: Sequence[PairShare],
    elapsed: float | None,
) -> None:
    errors = round_errors(snapshot, allocation, received, previous, pairs, elapsed)
    if errors:
        raise InputError(errors)


def allocation_of(result: SolveResult) -> tuple[dict[str, dict[str, float]], tuple[PairShare, ...]]:
    """A result document's allocation and pair allocations, as `next_round` takes them (pairs
    without time together yet: set `received` on them from your own bookkeeping)."""
    allocation = {job.id: dict(job.allocation) for job in result.jobs if job.allocation}
    pairs = tuple(
        PairShare(str(p["a"]), str(p["b"]), dict(p["allocation"]))
        for p in result.summary.get("pair_allocations", [])
    )
    return allocation, pairs


def _rule(rule: Rule | str, round_seconds: float | None) -> Rule:
    try:
        chosen = Rule(rule)
    except ValueError:
        names = ", ".join(r.value for r in Rule)
        raise InputError.single(("rule",), f"unknown rule {rule!r}; use one of {names}") from None
    if round_seconds is not None and not 0 < round_seconds < float("inf"):
        raise InputError.single(("round_seconds",), "must be a positive number of seconds")
    if chosen is Rule.DEFICIT and round_seconds is None:
        msg = "the deficit rule needs the round's length in seconds"
        raise InputError.single(("round_seconds",), msg, "missing")
    return chosen


def _order(order: Order | str) -> Order:
    try:
        return Order(order)
    except ValueError:
        names = ", ".join(o.value for o in Order)
        raise InputError.single(
            ("order",), f"unknown order {order!r}; use one of {names}"
        ) from None


def _clean_pairs(pairs: Sequence[PairShare]) -> list[PairShare]:
    return [
        PairShare(
            p.a, p.b, {k: float(v) for k, v in p.allocation.items() if v >= NEGLIGIBLE}, p.received
        )
        for p in pairs
    ]


def _assignments(
    rows: Combos,
    cluster: Cluster,
    selection: Selection,
    placements: list[dict[str, int]],
    previous: Mapping[str, Mapping[str, int]],
) -> tuple[Assignment, ...]:
    out = []
    ids, names, m = rows.job_ids, cluster.type_names, rows.num_jobs
    for chosen, placement in zip(selection.chosen, placements, strict=True):
        kind, c = names[chosen.gpu_type], chosen.row
        if c < m:  # a job alone: `place` made its placement for it alone
            job = ids[c]
            kept = previous.get(job) == placement
            out.append(Assignment(job, kind, placement, kept, chosen.priority))
            continue
        a, b = (ids[j] for j in rows.rows[c])
        for job, partner in ((a, b), (b, a)):
            kept = previous.get(job) == placement
            out.append(Assignment(job, kind, dict(placement), kept, chosen.priority, partner))
    return tuple(out)


def _waiting(
    rows: Combos, cluster: Cluster, selection: Selection
) -> tuple[tuple[str, ...], dict[str, str]]:
    """Jobs with time allocated (alone or in a pair) that do not run, and why."""
    m = rows.num_jobs
    has_time = rows.has_time.copy()
    has_time[list(rows.stalled)] = True  # time allocated, only where it makes no progress
    runs = np.array(selection.rows, dtype=np.int64)
    has_time[runs[runs < m]] = False
    for c in runs[runs >= m].tolist():
        has_time[list(rows.rows[c])] = False  # both members of a pair that runs
    waiting = np.flatnonzero(has_time).tolist()
    full = "the cluster's GPUs all went to higher-priority jobs"
    reasons = {rows.job_ids[j]: selection.reasons.get(j, full) for j in waiting}
    for j in waiting:
        if j in rows.stalled:
            names = ", ".join(repr(cluster.type_names[k]) for k in rows.stalled[j])
            reasons[rows.job_ids[j]] = (
                f"its time is on {names}, where it makes no progress (no throughput there)"
            )
    return tuple(rows.job_ids[j] for j in waiting), reasons
