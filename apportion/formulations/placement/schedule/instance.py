"""A snapshot as the schedule objective sees it: every job that may run after this decision
(running jobs, and waiting candidates in priority order), the ways each may run, and the
throughput each configuration loses next to each other.

Options per job: each allowed shape (k nodes × p GPUs of one type, as `instance.allowed_shapes`
gives them) on the whole cluster, and for a running job its current placement (`stay`: no
restart). With `moves` none a running job has only its `stay` option and keeps it; with
preempt it may also stop; with migrate it also has every shape of a candidate. A shape's speed
factor σ is the job's throughput on that spread (`spread_throughput`) over its throughput on the
type, 1 where the snapshot does not say.

Candidates: waiting jobs by level, then key, then snapshot order. Interchangeable ones (same
class, demand, level, shapes and speeds) form a group, of which only as many are offered as
could run at once on the GPUs of their types that no running job certainly keeps (every running
job when moves are none, the pinned ones under preempt, none under migrate: a running job of a
better level may itself be preempted by a better waiting one, so its GPUs are not held for sure);
`candidates` then keeps the first k (the reference offers its policy the head of its queue).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from apportion.formulations.placement.contention import Config, ContentionLookup
from apportion.formulations.placement.instance import allowed_shapes
from apportion.formulations.placement.options import ContentionPlacementOptions
from apportion.formulations.placement.schedule.candidates import (
    identity,
    kept_for_sure,
    never_stopped,
    per_gpu_price,
    pick,
    room_of,
)
from apportion.formulations.placement.schedule.priority import level_base, priority_levels
from apportion.solver.arraytypes import BoolArray, FloatArray, IntArray
from apportion.solver.snapshot import Job, Snapshot
from apportion.solver.snapshot.view import node_type

ObjectArray = NDArray[np.object_]


@dataclass
class Choices:
    """One row per way a job may run."""

    job: IntArray  # position among the instance's jobs
    nodes: IntArray  # k
    per_node: IntArray  # p (a `stay` row of an uneven placement: its largest piece)
    gpu_type: IntArray
    config: IntArray
    speed: FloatArray  # σ
    stay: BoolArray  # a running job where it runs

    @property
    def size(self) -> int:
        return int(self.job.size)


@dataclass
class ScheduleInstance:
    job_ids: list[str]  # every job of the snapshot
    node_ids: list[str]
    node_gpus: IntArray
    node_type: IntArray
    index: IntArray  # snapshot index of each job of the decision: running first
    running: BoolArray
    demand: IntArray
    level: IntArray
    weight: FloatArray  # π per GPU, by the job's level
    group: IntArray  # interchangeable candidates share a group
    held: list[tuple[IntArray, IntArray]]  # per running job: (nodes, GPUs on each)
    choices: Choices
    configs: list[Config]
    loss: FloatArray  # Λ[α, β] = 1 − 1/CS(α | β)
    source: ObjectArray  # where CS(α | β) came from (`contention.Source` values)
    lookup: ContentionLookup
    moves: str  # none, preempt or migrate
    pinned: BoolArray  # per job: a running job that runs on whatever the solution (see _pinned)
    levels: int
    reasons: dict[int, str] = field(default_factory=dict)  # snapshot index → why left out
    contention_value: str = "flat"  # what a loss costs (`price`)

    @property
    def total_gpus(self) -> int:
        return int(self.node_gpus.sum())

    @property
    def size(self) -> int:
        return int(self.index.size)


def build_schedule(snapshot: Snapshot, options: ContentionPlacementOptions) -> ScheduleInstance:
    nodes = snapshot.nodes or []
    type_names = [g.name for g in snapshot.gpu_types]
    node_gpus = np.array([n.gpus for n in nodes], dtype=np.int64)
    types = np.array([type_names.index(node_type(snapshot, n)) for n in nodes], dtype=np.int64)
    node_at = {n.id: i for i, n in enumerate(nodes)}
    jobs = list(snapshot.jobs)
    shapes = _all_shapes(jobs, type_names, node_gpus, types, options)
    spread = [_speeds(job, s, type_names) for job, s in zip(jobs, shapes, strict=True)]
    speeds = np.array([max(s, default=1.0) for s in spread] + [min(s, default=1.0) for s in spread])
    demands = np.array([job.scale_factor for job in jobs], dtype=np.int64)
    base = level_base(int(node_gpus.sum()), min(demands.tolist(), default=1), speeds)
    keys = np.array([_key(job, options.priority) for job in jobs], dtype=float)
    levels = priority_levels(keys, options.priority_levels, options.priority_tolerance, base)
    running = [j for j in range(len(jobs)) if jobs[j].placement is not None]
    held = [_held(jobs[j], node_at) for j in running]
    lookup = ContentionLookup.of(snapshot.contention, options.contention_scope)
    room = _room(
        jobs,
        (running, held),
        shapes,
        (levels.per_job, demands, speeds),
        lookup,
        options,
        typed=(node_gpus, types, type_names),
    )
    picked, reasons = pick(jobs, shapes, spread, levels.level, keys, room, options.candidates)
    order = running + picked
    configs: dict[Config, int] = {}
    choices = _choices(
        jobs, order, held, (shapes, spread), (types, type_names), configs, options.moves
    )
    config_list = list(configs)
    loss, source = _losses(lookup, config_list)
    index = np.array(order, dtype=np.int64)
    weight, demand = levels.per_job[index], demands[index]
    return ScheduleInstance(
        job_ids=[job.id for job in jobs],
        node_ids=[n.id for n in nodes],
        node_gpus=node_gpus,
        node_type=types,
        index=index,
        running=np.arange(index.size) < len(running),
        demand=demand,
        level=levels.level[index] if index.size else np.zeros(0, dtype=np.int64),
        weight=weight,
        group=_groups(jobs, order, len(running), shapes, spread, levels.level),
        held=held,
        choices=choices,
        configs=config_list,
        loss=loss,
        source=source,
        lookup=lookup,
        moves=options.moves,
        pinned=_pinned(choices, (weight, demand, len(running)), options, loss, node_gpus),
        levels=int(levels.weight.size),
        reasons=reasons,
        contention_value=options.contention_value,
    )


Shapes = list[tuple[int, int, int]]  # (k, p, type)


def _room(
    jobs: list[Job],
    runs: tuple[list[int], list[tuple[IntArray, IntArray]]],
    shapes: list[Shapes],
    per_job: tuple[FloatArray, IntArray, FloatArray],
    lookup: ContentionLookup,
    options: ContentionPlacementOptions,
    typed: tuple[IntArray, IntArray, list[str]],
) -> IntArray:
    """Per job: the GPUs it could run on in an optimal schedule, other waiting jobs aside
    (`candidates.room_of`, given the running jobs that keep theirs for sure)."""
    running, held = runs
    weight, demands, speeds = per_job
    node_gpus, types, type_names = typed
    stay_speed = [
        _speed(jobs[j], int(n.size), type_names[types[n[0]]])
        for j, (n, _) in zip(running, held, strict=True)
    ]
    kept = kept_for_sure(
        (weight, demands, np.array(stay_speed)),
        running,
        [j for j, job in enumerate(jobs) if job.placement is None and shapes[j]],
        (float(speeds.max(initial=1.0)), 1.0 - 1.0 / lookup.largest(), int(node_gpus.sum())),
        options,
    )
    return room_of(shapes, held, kept, (node_gpus, types))


def _losses(lookup: ContentionLookup, configs: list[Config]) -> tuple[FloatArray, ObjectArray]:
    """Λ(α | β) = 1 − 1/CS(α | β) for every pair of configurations, and where each CS came from."""
    found = [[lookup(a, b) for b in configs] for a in configs]
    pairs = (len(configs), len(configs))
    loss = np.array([[1.0 - 1.0 / f.cs for f in row] for row in found]).reshape(pairs)
    source = np.array([[f.source.value for f in row] for row in found], dtype=object)
    return loss, source.reshape(pairs)


def _all_shapes(
    jobs: list[Job],
    type_names: list[str],
    node_gpus: IntArray,
    types: IntArray,
    options: ContentionPlacementOptions,
) -> list[Shapes]:
    """Each job's allowed shapes, worked out once per kind of job."""
    known: dict[tuple[object, ...], Shapes] = {}
    out = []
    for job in jobs:
        kind = (job.scale_factor, job.consolidate, tuple(job.throughput.items()))
        if kind not in known:
            known[kind] = _shapes(job, type_names, node_gpus, types, options)
        out.append(known[kind])
    return out


def _shapes(
    job: Job,
    type_names: list[str],
    node_gpus: IntArray,
    types: IntArray,
    options: ContentionPlacementOptions,
) -> Shapes:
    usable = [
        k for k, name in enumerate(type_names) if not job.throughput or job.throughput.get(name)
    ]
    allowed = allowed_shapes(
        job.scale_factor, usable, node_gpus, types, options.shapes, options.allow_single_node
    )
    if job.consolidate and allowed:
        fewest = min(k for k, _, _ in allowed)
        allowed = [s for s in allowed if s[0] == fewest]
    return allowed


def _speeds(job: Job, shapes: Shapes, type_names: list[str]) -> list[float]:
    return [_speed(job, k, type_names[t]) for k, _, t in shapes]


def _speed(job: Job, nodes: int, gpu_type: str) -> float:
    """σ: the job's throughput spread over `nodes` over its throughput on the type."""
    spread = job.spread_throughput or {}
    reference = (job.throughput or {}).get(gpu_type, 0.0)
    if nodes not in spread or reference <= 0:
        return 1.0
    return float(spread[nodes] / reference)


def _key(job: Job, priority: str) -> float:
    """The job's priority key (smaller first); NaN when the snapshot does not give it."""
    if priority == "las":
        return float(job.attained_service or 0.0)
    if job.remaining_time is not None:
        return float(job.remaining_time)
    fastest = max(job.throughput.values(), default=0.0)
    if job.steps_remaining is None or fastest <= 0:
        return float("nan")
    return float(job.steps_remaining / fastest)


def _held(job: Job, node_at: dict[str, int]) -> tuple[IntArray, IntArray]:
    placement = job.placement or {}
    nodes = np.array([node_at[n] for n in placement], dtype=np.int64)
    return nodes, np.array(list(placement.values()), dtype=np.int64)


def _choices(
    jobs: list[Job],
    order: list[int],
    held: list[tuple[IntArray, IntArray]],
    shaped: tuple[list[Shapes], list[list[float]]],
    typed: tuple[IntArray, list[str]],
    configs: dict[Config, int],
    moves: str,
) -> Choices:
    shapes, speeds = shaped
    types, type_names = typed
    rows: list[tuple[int, int, int, int, int, float, bool]] = []
    for position, j in enumerate(order):
        job = jobs[j]
        if position < len(held):
            nodes, gpus = held[position]
            t = int(types[nodes[0]])
            cfg = configs.setdefault(_config(job, int(nodes.size)), len(configs))
            speed = _speed(job, int(nodes.size), type_names[t])
            rows.append((position, int(nodes.size), int(gpus.max()), t, cfg, speed, True))
            if moves != "migrate":
                continue
        for (k, p, t), speed in zip(shapes[j], speeds[j], strict=True):
            cfg = configs.setdefault(_config(job, k), len(configs))
            rows.append((position, k, p, t, cfg, speed, False))
    table = list(zip(*rows, strict=True)) if rows else [()] * 7
    return Choices(
        job=np.array(table[0], dtype=np.int64),
        nodes=np.array(table[1], dtype=np.int64),
        per_node=np.array(table[2], dtype=np.int64),
        gpu_type=np.array(table[3], dtype=np.int64),
        config=np.array(table[4], dtype=np.int64),
        speed=np.array(table[5], dtype=float),
        stay=np.array(table[6], dtype=bool),
    )


def _pinned(
    choices: Choices,
    jobs: tuple[FloatArray, IntArray, int],
    options: ContentionPlacementOptions,
    loss: FloatArray,
    node_gpus: IntArray,
) -> BoolArray:
    """Running jobs no solution stops (`candidates.never_stopped`) among the decision's jobs."""
    weight, demand, n_running = jobs
    w1, progress = options.w1, options.contention_value == "progress"
    waiting = np.arange(weight.size) >= n_running
    stay_speed = np.ones(weight.size)
    stay_speed[choices.job[choices.stay]] = choices.speed[choices.stay]
    out = np.zeros(weight.size, dtype=bool)
    out[~waiting] = never_stopped(
        (weight[~waiting], demand[~waiting], stay_speed[~waiting]),
        float(weight[waiting].max(initial=0.0)),
        float(choices.speed.max(initial=1.0)),
        per_gpu_price(w1, progress, weight, choices.speed)
        * float(node_gpus.sum())
        * float(loss.max(initial=0.0)),
        1.0 - w1,
    )
    return out


def _config(job: Job, nodes: int) -> Config:
    return (job.workload_class, job.scale_factor, nodes)


def _groups(
    jobs: list[Job],
    order: list[int],
    n_running: int,
    shapes: list[Shapes],
    speeds: list[list[float]],
    level: IntArray,
) -> IntArray:
    ids: dict[tuple[object, ...], int] = {}
    out = []
    for position, j in enumerate(order):
        key = (
            ("running", position)
            if position < n_running
            else identity(jobs[j], shapes[j], speeds[j], int(level[j]))
        )
        out.append(ids.setdefault(key, len(ids)))
    return np.array(out, dtype=np.int64)
