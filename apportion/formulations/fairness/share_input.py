"""From a snapshot to a `ShareStructure`: active jobs, groups, entities and offered pairs."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from apportion.formulations.allocation import JobGroups
from apportion.formulations.fairness.share_lp import ShareStructure
from apportion.formulations.fairness.space_sharing import (
    PairClasses,
    PairReport,
    merge_pair_classes,
    offered_pairs,
    prune_columns,
    usable_pairs,
)
from apportion.solver.arrays import ClusterArrays
from apportion.solver.arraytypes import BoolArray, FloatArray, IntArray
from apportion.solver.snapshot import Snapshot


@dataclass(frozen=True)
class Entities:
    """Which entity each job belongs to, and each entity's weight and inner policy."""

    of_job: IntArray  # (jobs,)
    weight: FloatArray  # W_e
    names: list[str]
    fifo: BoolArray  # inner policy is fifo (else fairness)

    @classmethod
    def single(cls, num_jobs: int) -> Entities:
        """Plain max-min fairness: everyone in one entity of weight 1."""
        return cls(np.zeros(num_jobs, np.int64), np.ones(1), ["all"], np.zeros(1, bool))


@dataclass(frozen=True)
class ShareInput:
    structure: ShareStructure | None  # None when no job can run anywhere
    jobs: IntArray  # the active jobs, in the order `structure.groups` refers to
    pairs: PairReport | None
    warnings: list[str]


def share_input(
    snapshot: Snapshot,
    problem: ClusterArrays,
    throughput: FloatArray,
    entities: Entities,
    *,
    merge: bool,
    space_sharing: bool = False,
    prune: bool = True,
    eligible: BoolArray | None = None,
) -> ShareInput:
    """Everything but the weights: groups of identical jobs (same usable throughputs,
    normalizer, scale factor, weight and entity; fifo entities keep jobs apart since their
    order matters) and,
    with space sharing, the offered pairs merged into classes and pruned. `eligible` is where
    the policy may give time (default: where the job runs); a job that runs nowhere is left
    out whatever it says, since no definition makes it progress."""
    active: BoolArray = np.asarray(problem.eligible.any(axis=1), dtype=bool)
    jobs = np.flatnonzero(active)
    if jobs.size == 0:
        return ShareInput(None, jobs, None, [])
    eligible = problem.eligible if eligible is None else eligible
    groups = _groups(problem, jobs, throughput, eligible, entities, merge)
    sharing = None
    if space_sharing:
        sharing = _pairs(snapshot, problem, throughput, jobs, groups, active, prune)
        groups = sharing.groups
    rep = groups.representative
    prop = throughput[rep] @ problem.gpu_count / problem.gpu_count.sum()
    structure = ShareStructure(
        groups=groups,
        labels=list(map(problem.job_ids.__getitem__, rep.tolist())),
        gpu_names=problem.gpu_names,
        throughput=throughput[rep],
        eligible=eligible[rep],
        scale=problem.scale_factor[rep],
        weight=problem.weight[rep],
        gain=problem.scale_factor[rep] / prop,
        capacity=problem.gpu_count,
        entity=entities.of_job[rep],
        entity_weight=entities.weight,
        entity_names=entities.names,
        pairs=sharing.classes if sharing else None,
        pair_columns=sharing.columns if sharing else None,
    )
    if sharing is None:
        return ShareInput(structure, jobs, None, [])
    return ShareInput(structure, jobs, sharing.report, sharing.warnings)


@dataclass(frozen=True)
class _Sharing:
    groups: JobGroups  # possibly split so that pairs are uniform between groups
    classes: PairClasses
    columns: tuple[IntArray, IntArray]  # (class, type) of each pair column kept
    report: PairReport
    warnings: list[str]


def _pairs(
    snapshot: Snapshot,
    problem: ClusterArrays,
    throughput: FloatArray,
    jobs: IntArray,
    groups: JobGroups,
    active: BoolArray,
    prune: bool,
) -> _Sharing:
    """Offered pairs → usable ones → classes between (split) groups → pruned columns."""
    pairs, report, warnings = usable_pairs(offered_pairs(snapshot, problem), problem, active)
    groups, classes = merge_pair_classes(pairs, jobs, groups, problem.num_jobs)
    rep = groups.representative
    classes = replace(classes, scale=problem.scale_factor[rep][classes.g])
    alone = np.stack([throughput[rep][classes.g], throughput[rep][classes.h]], axis=1)
    keep, pruned = prune_columns(classes, alone, problem.gpu_count, prune)
    c, k = np.nonzero(keep)
    dropped = pruned.any(axis=1) & ~keep.any(axis=1)
    report = replace(
        report,
        pruned=int(classes.count[dropped].sum()),
        pruned_columns=int((pruned * classes.count[:, None]).sum()),
        columns=int(c.size),
        classes=classes.size,
    )
    columns = (c.astype(np.int64), k.astype(np.int64))
    return _Sharing(groups, classes, columns, report, warnings)


def _groups(
    problem: ClusterArrays,
    jobs: IntArray,
    throughput: FloatArray,
    eligible: BoolArray,
    entities: Entities,
    merge: bool,
) -> JobGroups:
    if not merge:
        return JobGroups.identity(jobs)
    entity = entities.of_job[jobs]
    apart = np.where(entities.fifo[entity], jobs, -1)
    usable = np.where(eligible[jobs], throughput[jobs], 0.0)
    # The normalizer prop_j reads every throughput, usable or not: two jobs that differ only on
    # a type too small for their gang are normalized differently and must stay apart.
    prop = throughput[jobs] @ problem.gpu_count
    key = np.column_stack(
        [usable, prop, problem.scale_factor[jobs], problem.weight[jobs], entity, apart]
    )
    return JobGroups.by_rows(jobs, key.astype(float))
