"""Space sharing (FORMULATIONS §1c): offered job pairs as sparse combination columns.

A pair {a, b} with equal scale factor s may run together on type k for a fraction Y_pk of the
time; a then progresses at T^(a)_pk and b at T^(b)_pk, and the pair occupies s GPUs (not 2s).
Only pairs the snapshot offers become columns, one per (pair, usable type): the model grows
with the offered pairs, never with jobs × combinations × types.

Exact pruning: on type k the pair can be replaced by time-slicing its members alone, a for
Y·r_a and b for Y·r_b with r = T^(pair) / T^(alone), which gives the same throughputs and uses no
more of any resource whenever r_a + r_b ≤ 1 (each member's time and the type's GPUs). Such
(pair, type) columns never improve an objective that depends on X only through throughputs, so
they are dropped.

Merging: identical jobs (groups) stay merged when the offered pairs are the same for every
member, i.e. between two groups either every pair of members is offered with the same
throughputs or none is (within a group, every pair with equal throughputs for both members).
Then permuting a group's members maps the model onto itself and the symmetric optimum is an
optimum: a class c of n_c interchangeable pairs gets one column per type, with Y_ck the time of
each of its pairs. Groups that break the condition are split until it holds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from pydantic import Field

from apportion.formulations.allocation import JobGroups
from apportion.solver.arrays import ClusterArrays
from apportion.solver.arraytypes import FloatArray, IntArray
from apportion.solver.errors import InputError
from apportion.solver.options import PolicyOptions
from apportion.solver.snapshot import Snapshot


@dataclass(frozen=True)
class OfferedPairs:
    """The snapshot's pairs as arrays: member job indices and per-type co-located throughputs."""

    a: IntArray
    b: IntArray
    ta: FloatArray  # (pairs, types): throughput of a while co-located
    tb: FloatArray

    @property
    def size(self) -> int:
        return int(self.a.size)

    def subset(self, keep: NDArray[np.bool_]) -> OfferedPairs:
        return OfferedPairs(self.a[keep], self.b[keep], self.ta[keep], self.tb[keep])


@dataclass(frozen=True)
class PairClasses:
    """Classes of interchangeable pairs between job groups g ≤ h (one row per class)."""

    g: IntArray
    h: IntArray
    count: FloatArray  # n_c, pairs in the class
    ta: FloatArray  # (classes, types): throughput of the g member
    tb: FloatArray  # throughput of the h member
    scale: FloatArray  # s_c, GPUs the pair occupies (set by the caller, which knows s per group)

    @property
    def size(self) -> int:
        return int(self.g.size)


@dataclass(frozen=True)
class PairReport:
    """What happened to the offered pairs; surfaces in the result summary and warnings."""

    offered: int = 0
    mixed_scale: int = 0  # ignored: members with different scale factors
    unusable: int = 0  # a member runs nowhere, or no type can host the pair
    pruned: int = 0  # every usable type of the pair pruned (cannot beat time-slicing)
    pruned_columns: int = 0  # (pair, type) entries pruned
    columns: int = 0  # (class, type) columns in the model
    classes: int = 0

    def summary(self) -> dict[str, int]:
        return {
            "pairs_offered": self.offered,
            "pairs_ignored_mixed_scale": self.mixed_scale,
            "pairs_unusable": self.unusable,
            "pairs_pruned": self.pruned,
            "pair_type_entries_pruned": self.pruned_columns,
            "pair_classes": self.classes,
            "pair_columns": self.columns,
        }


def offered_pairs(snapshot: Snapshot, problem: ClusterArrays) -> OfferedPairs:
    """All pairs the snapshot lists, as arrays (schema validation already checked the ids)."""
    listed = snapshot.job_pairs or []
    index = {job_id: j for j, job_id in enumerate(problem.job_ids)}
    column = {name: k for k, name in enumerate(problem.gpu_names)}
    n = len(listed)
    a = np.fromiter((index[p.a] for p in listed), dtype=np.int64, count=n)
    b = np.fromiter((index[p.b] for p in listed), dtype=np.int64, count=n)
    # One flat pass over the per-type entries (a comprehension: 100,000s of pairs).
    entries = [
        (i, column[name], both[0], both[1])
        for i, pair in enumerate(listed)
        for name, both in pair.throughput.items()
    ]
    ta = np.zeros((n, problem.num_types))
    tb = np.zeros((n, problem.num_types))
    if entries:
        flat = np.array(entries, dtype=float)
        rows, cols = flat[:, 0].astype(np.int64), flat[:, 1].astype(np.int64)
        ta[rows, cols] = flat[:, 2]
        tb[rows, cols] = flat[:, 3]
    return OfferedPairs(a, b, ta, tb)


def usable_pairs(
    pairs: OfferedPairs, problem: ClusterArrays, active: NDArray[np.bool_]
) -> tuple[OfferedPairs, PairReport, list[str]]:
    """Drop pairs with mixed scale factors (with a warning) and pairs that can run nowhere."""
    scale = problem.scale_factor
    mixed = scale[pairs.a] != scale[pairs.b]
    warnings = []
    if mixed.any():
        first = np.flatnonzero(mixed)[:3]
        names = ", ".join(
            f"{problem.job_ids[pairs.a[i]]}+{problem.job_ids[pairs.b[i]]}" for i in first
        )
        warnings.append(
            f"space sharing: {int(mixed.sum())} offered pair(s) ignored because their jobs have "
            f"different scale factors (e.g. {names})"
        )
    fits = scale[pairs.a][:, None] <= problem.gpu_count[None, :]
    hosts = ((pairs.ta > 0) | (pairs.tb > 0)) & fits
    usable = ~mixed & active[pairs.a] & active[pairs.b] & hosts.any(axis=1)
    report = PairReport(
        offered=pairs.size, mixed_scale=int(mixed.sum()), unusable=int((~mixed & ~usable).sum())
    )
    return pairs.subset(usable), report, warnings


def merge_pair_classes(
    pairs: OfferedPairs, jobs: IntArray, groups: JobGroups, num_jobs: int
) -> tuple[JobGroups, PairClasses]:
    """Split `groups` (over `jobs`) until the offered pairs are uniform between groups, then
    merge the pairs into classes. With singleton groups every pair is its own class."""
    while True:
        group_of = np.full(num_jobs, -1)
        group_of[jobs] = groups.inverse
        classes, bad = _classes(pairs, group_of, groups.count)
        if not bad.size:
            return groups, classes
        groups = _split(groups, jobs, group_of, bad, pairs)


def _classes(
    pairs: OfferedPairs, group_of: IntArray, count: FloatArray
) -> tuple[PairClasses, IntArray]:
    """Pair classes by (g, h) and the groups that break the uniformity condition."""
    ga, gb = group_of[pairs.a], group_of[pairs.b]
    swap = ga > gb
    g, h = np.where(swap, gb, ga), np.where(swap, ga, gb)
    ta = np.where(swap[:, None], pairs.tb, pairs.ta)
    tb = np.where(swap[:, None], pairs.ta, pairs.tb)
    if not g.size:
        empty = np.zeros((0, pairs.ta.shape[1]))
        return PairClasses(g, h, np.zeros(0), empty, empty, np.zeros(0)), np.zeros(0, np.int64)
    _, first, inverse, n_pairs = np.unique(
        g * (int(h.max()) + 1) + h, return_index=True, return_inverse=True, return_counts=True
    )
    full = JobGroups.by_rows(np.arange(g.size), np.column_stack([g, h, ta, tb]).astype(float))
    # One distinct throughput row per class: its full-key groups all map to the same class.
    distinct = np.bincount(inverse[full.representative], minlength=first.size)
    cg, ch = g[first], h[first]
    same = cg == ch
    expected = np.where(same, count[cg] * (count[cg] - 1) / 2, count[cg] * count[ch])
    asymmetric = np.zeros(first.size, bool)
    asymmetric[same] = (ta[first[same]] != tb[first[same]]).any(axis=1)
    bad = (n_pairs != expected) | (distinct > 1) | asymmetric
    classes = PairClasses(cg, ch, n_pairs.astype(float), ta[first], tb[first], np.zeros(first.size))
    return classes, np.unique(np.concatenate([cg[bad], ch[bad]]))


def _split(
    groups: JobGroups, jobs: IntArray, group_of: IntArray, bad: IntArray, pairs: OfferedPairs
) -> JobGroups:
    """Members of the `bad` groups that appear in some pair become singletons; members with no
    pair stay together (they remain interchangeable)."""
    in_pair = np.zeros(group_of.size, bool)
    in_pair[pairs.a] = True
    in_pair[pairs.b] = True
    split = np.isin(groups.inverse, bad) & in_pair[jobs]
    tag = np.where(split, jobs, -1)
    return JobGroups.by_rows(jobs, np.column_stack([groups.inverse, tag]).astype(float))


def prune_columns(
    classes: PairClasses, alone: FloatArray, capacity: FloatArray, prune: bool
) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """(usable, pruned) masks over (class, type): the pair fits and someone progresses; pruned
    where r_a + r_b ≤ 1 (time-slicing the members alone is at least as good, see module doc).

    `alone` holds the isolated throughput of each class's (g, h) members: (classes, 2, types).
    """
    fits = classes.scale[:, None] <= capacity[None, :]
    usable = fits & ((classes.ta > 0) | (classes.tb > 0))
    if not prune:
        return usable, np.zeros_like(usable)
    with np.errstate(divide="ignore", invalid="ignore"):
        ra = np.where(classes.ta > 0, classes.ta / alone[:, 0], 0.0)
        rb = np.where(classes.tb > 0, classes.tb / alone[:, 1], 0.0)
    pruned = usable & (ra + rb <= 1.0)
    return usable & ~pruned, pruned


class SpaceSharingOptions(PolicyOptions):
    space_sharing: bool = Field(
        False,
        description="Let the snapshot's job_pairs share GPUs (pairs with mixed scale factors "
        "are ignored with a warning).",
    )
    prune_pairs: bool = Field(
        True,
        description="Drop (pair, GPU type) columns that cannot beat time-slicing the two jobs "
        "alone (exact; the count is reported).",
    )


def check_space_sharing(space_sharing: bool, heterogeneity_aware: bool) -> None:
    """Pair throughputs are measured; an agnostic policy has nothing to compare them with."""
    if space_sharing and not heterogeneity_aware:
        raise InputError.single(
            ("options", "space_sharing"),
            "space sharing needs measured throughputs: not available with "
            "heterogeneity_aware=false",
        )
