"""A placement snapshot in array form: nodes, running jobs, candidates' allowed shapes, and the
contention sensitivities between every pair of job configurations that can occur.

A *shape* is (nodes k, GPUs per node p) with k·p = demand, on nodes of one GPU type. By default p
runs over the powers of two up to the node size (plus the whole demand on one node when it
fits); `shapes` replaces that list per demand, `allow_single_node = false` drops k = 1 for jobs
of more than one GPU, and a job marked `consolidate` keeps only the fewest-node shapes its demand
allows on the cluster (it waits rather than spread).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from apportion.formulations.placement.contention import Config, ContentionLookup, Lookup
from apportion.solver.arraytypes import FloatArray, IntArray
from apportion.solver.snapshot import Job, Snapshot
from apportion.solver.snapshot.view import node_type

Shape = tuple[int, int]  # (nodes, GPUs per node)
#: A placement of candidates: job index → (option row, node indices).
Started = dict[int, tuple[int, list[int]]]


@dataclass
class Options:
    """One row per way to start: a candidate's shape, or a *pooled* single-node shape shared by
    a group of interchangeable candidates (then `candidate` is the group's first member and up
    to `limit` of them may start that way)."""

    candidate: IntArray  # candidate position (index into Instance.candidates)
    nodes: IntArray  # k
    per_node: IntArray  # p
    gpu_type: IntArray  # type index
    config: IntArray  # config index
    pooled: NDArray[np.bool_]
    limit: IntArray  # starts this row can carry: 1, or the group's size when pooled

    @property
    def size(self) -> int:
        return int(self.candidate.size)


@dataclass
class Instance:
    """Everything the placement models and the evaluator read."""

    job_ids: list[str]
    node_ids: list[str]
    node_gpus: IntArray
    node_type: IntArray
    free: IntArray  # GPUs not held by running jobs
    type_names: list[str]
    running: IntArray  # job indices
    running_nodes: list[IntArray]  # node indices per running job
    running_gpus: list[IntArray]  # GPUs on each of those nodes
    running_config: IntArray
    candidates: IntArray  # job indices of waiting jobs
    demand: IntArray  # per candidate
    identity: list[tuple[object, ...]]  # per candidate: equal tuples = interchangeable jobs
    group: IntArray  # per candidate: its group of interchangeable candidates
    options: Options
    configs: list[Config]
    cs: FloatArray  # cs[α, β] = CS(config α | config β)
    lookup: ContentionLookup
    reasons: dict[int, str] = field(default_factory=dict)
    too_wide: set[int] = field(default_factory=set)  # jobs no allowed shape fits, even idle
    runs_nowhere: set[int] = field(default_factory=set)  # ... for want of a usable GPU type
    # `cs` holds CS' = 2 − 1/CS for the reference objective (see `reference`); `source` always
    # answers the table's own values.
    reference: bool = False
    _sources: dict[tuple[int, int], Lookup] = field(default_factory=dict)

    @property
    def num_jobs(self) -> int:
        return len(self.job_ids)

    @property
    def total_gpus(self) -> int:
        return int(self.node_gpus.sum())

    def options_of(self, position: int) -> IntArray:
        """Rows candidate `position` may start with: its own and its group's pooled ones."""
        opts = self.options
        own = (opts.candidate == position) & ~opts.pooled
        shared = opts.pooled & (self.group[opts.candidate] == self.group[position])
        return np.flatnonzero(own | shared)

    def priced(self, cs: FloatArray) -> FloatArray:
        """Per-job CS values in the units of `cs`, the table the models read."""
        return 2.0 - 1.0 / cs if self.reference else cs

    def source(self, target: int, co_runner: int) -> Lookup:
        """How CS(config target | config co_runner) was found."""
        key = (target, co_runner)
        if key not in self._sources:
            self._sources[key] = self.lookup(self.configs[target], self.configs[co_runner])
        return self._sources[key]


def default_shapes(demand: int, node_size: int, allow_single_node: bool) -> list[Shape]:
    """(k, p) with p a power of two ≤ node size dividing the demand, plus (1, demand) if it fits."""
    shapes = []
    p = 1
    while p <= min(node_size, demand):
        if demand % p == 0:
            shapes.append((demand // p, p))
        p *= 2
    if demand <= node_size and (1, demand) not in shapes:
        shapes.append((1, demand))
    if not allow_single_node and demand > 1:
        shapes = [s for s in shapes if s[0] > 1]
    return sorted(shapes)


def build_instance(
    snapshot: Snapshot,
    shapes: Mapping[int, Sequence[Shape]] | None,
    allow_single_node: bool,
    scope: str,
) -> Instance:
    nodes = snapshot.nodes or []
    type_names = [g.name for g in snapshot.gpu_types]
    node_gpus = np.array([node.gpus for node in nodes], dtype=np.int64)
    types = np.array([type_names.index(node_type(snapshot, n)) for n in nodes], dtype=np.int64)
    configs = _Configs()
    running = _running(snapshot, {node.id: n for n, node in enumerate(nodes)}, configs)
    free = node_gpus.copy()
    for idx, gpus in zip(running.nodes, running.gpus, strict=True):
        free[idx] -= gpus
    waiting = _Waiting(type_names, node_gpus, types, free, shapes, allow_single_node)
    candidates = [j for j, job in enumerate(snapshot.jobs) if job.placement is None]
    for position, j in enumerate(candidates):
        waiting.add(position, j, snapshot.jobs[j], configs)
    group = _groups(waiting.identity)
    table = _pool(
        np.array(waiting.rows, dtype=np.int64).reshape(-1, 5), group, scope == "multi_node"
    )
    config_list = list(configs.index)
    instance = Instance(
        job_ids=[job.id for job in snapshot.jobs],
        node_ids=[node.id for node in nodes],
        node_gpus=node_gpus,
        node_type=types,
        free=free,
        type_names=type_names,
        running=np.array(running.jobs, dtype=np.int64),
        running_nodes=running.nodes,
        running_gpus=running.gpus,
        running_config=np.array(running.config, dtype=np.int64),
        candidates=np.array(candidates, dtype=np.int64),
        demand=np.array([snapshot.jobs[j].scale_factor for j in candidates], dtype=np.int64),
        identity=waiting.identity,
        group=group,
        options=_options(table),
        configs=config_list,
        cs=np.ones((len(config_list), len(config_list))),
        lookup=ContentionLookup(snapshot.contention, scope),
        reasons=waiting.reasons,
        too_wide=waiting.too_wide,
        runs_nowhere=waiting.runs_nowhere,
    )
    for a in range(len(config_list)):
        for b in range(len(config_list)):
            instance.cs[a, b] = instance.source(a, b).cs
    return instance


@dataclass
class _Configs:
    """Configuration numbers in order of first appearance (running jobs first)."""

    index: dict[Config, int] = field(default_factory=dict)

    def of(self, cfg: Config) -> int:
        return self.index.setdefault(cfg, len(self.index))


@dataclass
class _Running:
    jobs: list[int] = field(default_factory=list)
    nodes: list[IntArray] = field(default_factory=list)
    gpus: list[IntArray] = field(default_factory=list)
    config: list[int] = field(default_factory=list)


def _running(snapshot: Snapshot, node_index: dict[str, int], configs: _Configs) -> _Running:
    """The placed jobs: their nodes, GPUs on each and configuration."""
    out = _Running()
    for j, job in enumerate(snapshot.jobs):
        if job.placement is None:
            continue
        idx = np.array([node_index[n] for n in job.placement], dtype=np.int64)
        out.jobs.append(j)
        out.nodes.append(idx)
        out.gpus.append(np.array(list(job.placement.values()), dtype=np.int64))
        out.config.append(configs.of((job.workload_class, job.scale_factor, idx.size)))
    return out


@dataclass
class _Waiting:
    """The candidates' option rows (position, k, p, type, config), identities and the reasons
    a candidate cannot start at all."""

    type_names: list[str]
    node_gpus: IntArray
    types: IntArray
    free: IntArray
    shapes: Mapping[int, Sequence[Shape]] | None
    allow_single_node: bool
    rows: list[tuple[int, int, int, int, int]] = field(default_factory=list)
    identity: list[tuple[object, ...]] = field(default_factory=list)
    reasons: dict[int, str] = field(default_factory=dict)
    too_wide: set[int] = field(default_factory=set)
    runs_nowhere: set[int] = field(default_factory=set)

    def add(self, position: int, j: int, job: Job, configs: _Configs) -> None:
        usable = [
            k
            for k, name in enumerate(self.type_names)
            if not job.throughput or job.throughput.get(name)
        ]
        allowed = allowed_shapes(
            job.scale_factor,
            usable,
            self.node_gpus,
            self.types,
            self.shapes,
            self.allow_single_node,
        )
        if job.consolidate and allowed:
            fewest = min(k for k, _, _ in allowed)
            allowed = [s for s in allowed if s[0] == fewest]
        fitting = [
            (k, p, t) for k, p, t in allowed if ((self.types == t) & (self.free >= p)).sum() >= k
        ]
        if not usable:
            self.reasons[j] = "no positive throughput on any GPU type"
            self.runs_nowhere.add(j)
        elif not allowed:
            self.reasons[j] = f"no allowed shape places {job.scale_factor} GPUs on these nodes"
            self.too_wide.add(j)
        elif not fitting:
            self.reasons[j] = "not started: no allowed shape fits the free GPUs"
        cfg_class = job.workload_class
        for k, p, t in fitting:
            self.rows.append((position, k, p, t, configs.of((cfg_class, job.scale_factor, k))))
        self.identity.append((cfg_class, job.scale_factor, tuple(fitting)))


def _options(table: IntArray) -> Options:
    """The option rows of `_pool`'s table."""
    return Options(
        candidate=table[:, 0].copy(),
        nodes=table[:, 1].copy(),
        per_node=table[:, 2].copy(),
        gpu_type=table[:, 3].copy(),
        config=table[:, 4].copy(),
        pooled=table[:, 5] > 0,
        limit=table[:, 6].copy(),
    )


def _groups(identity: list[tuple[object, ...]]) -> IntArray:
    """Group id per candidate: candidates with equal identity are interchangeable."""
    ids: dict[tuple[object, ...], int] = {}
    return np.array([ids.setdefault(key, len(ids)) for key in identity], dtype=np.int64)


def _pool(table: IntArray, group: IntArray, pool: bool) -> IntArray:
    """Columns candidate, k, p, type, config, pooled, limit. With `pool`, the single-node rows of
    a group of interchangeable candidates become one row on its first member that up to the
    group's size of them may use: single-node jobs neither suffer nor cause contention then, so
    which member lands where does not matter, and one integer count per node replaces a binary
    per member (no symmetric copies for the search to revisit)."""
    if not table.size:
        return np.zeros((0, 7), dtype=np.int64)
    single = table[:, 1] == 1
    if not pool or not single.any():
        return np.column_stack(
            [table, np.zeros(len(table), np.int64), np.ones(len(table), np.int64)]
        )
    size = np.bincount(group)
    first = np.full(size.size, -1)
    for position in range(group.size - 1, -1, -1):
        first[group[position]] = position
    keep = ~single | (table[:, 0] == first[group[table[:, 0]]])
    out = table[keep]
    pooled = (out[:, 1] == 1).astype(np.int64)
    limit = np.where(pooled > 0, size[group[out[:, 0]]], 1)
    return np.column_stack([out, pooled, limit])


def allowed_shapes(
    demand: int,
    usable: list[int],
    node_gpus: IntArray,
    types: IntArray,
    shapes: Mapping[int, Sequence[Shape]] | None,
    allow_single_node: bool,
) -> list[tuple[int, int, int]]:
    """(k, p, type) the job may take on an empty cluster: enough nodes of that type and size."""
    out: list[tuple[int, int, int]] = []
    for t in usable:
        sizes = node_gpus[types == t]
        if sizes.size == 0:
            continue
        if shapes is not None and demand in shapes:
            listed = [(int(k), int(p)) for k, p in shapes[demand]]
            if not allow_single_node and demand > 1:
                listed = [s for s in listed if s[0] > 1]
        else:
            listed = default_shapes(demand, int(sizes.max()), allow_single_node)
        out.extend((k, p, t) for k, p in listed if (sizes >= p).sum() >= k)
    return out
