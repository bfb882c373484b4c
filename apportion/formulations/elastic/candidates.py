"""The snapshot's elastic jobs as one flat array of candidate configurations, grouped by job.

A candidate is kept when it can run (goodput > 0), fits its GPU type and the job's `max_gpus`;
a pinned job keeps only its current configuration, and only one of them where `current` (GPU
type, GPUs, nodes) matches several (batch sizes): the one with the most goodput, which every
objective prefers for the same GPUs. Each job's candidates are normalized by the
smallest goodput among them (Sia: the slowest configuration counts 1), and, when the job runs
somewhere, every candidate that would restart it is discounted by Sia's re-allocation factor
r = max(T − n·S, 0)/(T + S) (T its age, n its restarts, S its restart seconds; 1 while T < S).
Jobs given a goodput `model` get a candidate per node shape of each type it models, at the best
batch size (`goodput.best_batch`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from apportion.formulations.elastic.goodput import JobModel, PerfParams, best_batch
from apportion.formulations.elastic.shapes import shapes_by_type, type_nodes
from apportion.solver.arrays import ClusterArrays
from apportion.solver.arraytypes import BoolArray, FloatArray, IntArray
from apportion.solver.snapshot import Snapshot
from apportion.solver.snapshot.elastic import Configuration, Elastic, GoodputModel

NOT_ELASTIC = "not an elastic job: it lists no configurations (`elastic`)"
NO_GOODPUT = "no configuration with a positive goodput"
TOO_WIDE = "every configuration needs more GPUs than its type has (or than `max_gpus`)"


@dataclass
class Candidates:
    """Candidates sorted by job: those of job j are `start[j]:start[j + 1]`."""

    job: IntArray
    gpu: IntArray  # GPU type index
    gpus: IntArray
    nodes: IntArray
    batch: IntArray  # 0 where not given
    local: IntArray
    accumulation: IntArray
    throughput: FloatArray  # NaN where not given
    goodput: FloatArray
    label: IntArray  # position in the job's own list (or its shape, for model jobs)
    current: BoolArray  # the configuration the job runs in now (no restart)
    normalized: FloatArray = field(default_factory=lambda: np.zeros(0))  # goodput / job's min
    start: IntArray = field(default_factory=lambda: np.zeros(1, np.int64))

    @property
    def size(self) -> int:
        return int(self.job.size)

    def take(self, keep: BoolArray) -> Candidates:
        columns = {name: getattr(self, name)[keep] for name in _COLUMNS}
        normalized = self.normalized[keep] if self.normalized.size else self.normalized
        return Candidates(**columns, normalized=normalized)


_COLUMNS = (
    "job",
    "gpu",
    "gpus",
    "nodes",
    "batch",
    "local",
    "accumulation",
    "throughput",
    "goodput",
    "label",
    "current",
)


@dataclass
class ElasticJobs:
    """Per job: whether it is elastic and what the objectives read; and its candidates."""

    candidates: Candidates
    weight: FloatArray
    pinned: BoolArray
    running: BoolArray  # has a current configuration
    remaining: FloatArray  # NaN where not given
    restart_factor: FloatArray  # 1 where nothing would restart
    reasons: dict[int, str]

    @property
    def num_jobs(self) -> int:
        return int(self.weight.size)

    def has_candidates(self) -> BoolArray:
        c = self.candidates
        return np.diff(c.start) > 0

    def restrict(self, keep: BoolArray) -> tuple[ElasticJobs, IntArray]:
        """The same jobs with only the candidates in `keep`, and each kept one's old index."""
        kept = np.flatnonzero(keep)
        cands = self.candidates.take(keep)
        cands.start = np.searchsorted(cands.job, np.arange(self.num_jobs + 1)).astype(np.int64)
        jobs = ElasticJobs(
            cands,
            self.weight,
            self.pinned,
            self.running,
            self.remaining,
            self.restart_factor,
            self.reasons,
        )
        return jobs, kept


def collect(snapshot: Snapshot, problem: ClusterArrays, restart: bool) -> ElasticJobs:
    """Every job's candidates (see the module); `restart` applies Sia's re-allocation factor."""
    m = problem.num_jobs
    column = {name: k for k, name in enumerate(problem.gpu_names)}
    shapes = shapes_by_type(type_nodes(snapshot), problem.gpu_names)
    rows: list[tuple[float, ...]] = []
    reasons: dict[int, str] = {}
    specs = [job.elastic for job in snapshot.jobs]
    listed: list[tuple[int, Elastic]] = []
    for j, spec in enumerate(specs):
        if spec is None:
            reasons[j] = NOT_ELASTIC
        elif spec.configurations is not None:
            listed.append((j, spec))
        elif spec.model is not None:
            rows += _modelled(j, spec, spec.model, column, shapes)
    modelled = np.array(rows, dtype=float).reshape(-1, len(_COLUMNS))
    table = np.vstack([_listed(listed, column), modelled])
    table = table[np.argsort(table[:, 0], kind="stable")]  # by job, each job's in its order
    cands = Candidates(*(table[:, i].astype(_dtype(name)) for i, name in enumerate(_COLUMNS)))
    pinned = np.array([s is not None and s.pinned for s in specs], dtype=bool)
    running = np.array([s is not None and s.current is not None for s in specs], dtype=bool)
    cands = _usable(cands, problem, specs, pinned, reasons)
    factor = _restart_factors(specs) if restart else np.ones(m)
    cands.start = np.searchsorted(cands.job, np.arange(m + 1)).astype(np.int64)
    cands.normalized = _normalized(cands, factor, running)
    remaining = np.array(
        [np.nan if s is None or s.remaining is None else s.remaining for s in specs]
    )
    return ElasticJobs(cands, problem.weight, pinned, running, remaining, factor, reasons)


def _dtype(name: str) -> type:
    if name in ("throughput", "goodput"):
        return float
    return bool if name == "current" else np.int64


def _matches(spec: Elastic, gpu_type: str, gpus: int, nodes: int) -> bool:
    now = spec.current
    return (
        now is not None
        and now.gpu_type == gpu_type
        and now.gpus == gpus
        and now.nodes in (None, nodes)
    )


def _listed(listed: list[tuple[int, Elastic]], column: dict[str, int]) -> FloatArray:
    """The rows (in `_COLUMNS` order) of the jobs that list their configurations, a column at
    a time: a round's thousands of configurations cost one pass per field."""
    configs: list[Configuration] = [c for _, s in listed for c in s.configurations or ()]
    sizes = np.array([len(s.configurations or ()) for _, s in listed], dtype=np.int64)
    job = np.repeat(np.array([j for j, _ in listed], dtype=np.int64), sizes)
    label = np.arange(job.size) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    gpu = np.array([column[c.gpu_type] for c in configs], dtype=float)
    gpus = np.array([c.gpus for c in configs], dtype=float)
    nodes = np.array([c.nodes for c in configs], dtype=float)
    # each job's current configuration (type −1: none; nodes 0: any), one row per configuration
    now = [s.current for _, s in listed]
    now_gpu = np.array([-1 if c is None else column.get(c.gpu_type, -2) for c in now], float)
    now_gpus = np.array([0 if c is None else c.gpus for c in now], dtype=float)
    now_nodes = np.array([0 if c is None else c.nodes or 0 for c in now], dtype=float)
    on_nodes = np.repeat(now_nodes, sizes)
    current = (
        (gpu == np.repeat(now_gpu, sizes))
        & (gpus == np.repeat(now_gpus, sizes))
        & ((on_nodes == 0) | (on_nodes == nodes))
    )
    nan = float("nan")
    return (
        np.column_stack(
            [
                job,
                gpu,
                gpus,
                nodes,
                [c.batch_size or 0 for c in configs],
                [c.local_batch or 0 for c in configs],
                [c.accumulation_steps for c in configs],
                [nan if c.throughput is None else c.throughput for c in configs],
                [c.value for c in configs],
                label,
                current,
            ]
        )
        .astype(float)
        .reshape(-1, len(_COLUMNS))
    )


def _modelled(
    j: int,
    spec: Elastic,
    model: GoodputModel,
    column: dict[str, int],
    shapes: dict[str, list[tuple[int, int]]],
) -> list[tuple[float, ...]]:
    rows: list[tuple[float, ...]] = []
    label = 0
    for name, per_type in model.types.items():
        allowed = [s for s in shapes.get(name, []) if s[0] <= (per_type.max_nodes or s[0])]
        if not allowed:
            continue
        nodes, gpus = (np.array(v, dtype=float) for v in zip(*allowed, strict=True))
        job_model = JobModel(
            PerfParams(
                per_type.alpha_c,
                per_type.beta_c,
                per_type.alpha_n,
                per_type.beta_n,
                per_type.alpha_r,
                per_type.beta_r,
                per_type.gamma,
            ),
            model.init_batch,
            model.max_batch,
            model.grad_sqr,
            model.grad_var,
            per_type.min_local_batch,
            per_type.max_local_batch,
            per_type.scale,
        )
        best = best_batch(job_model, nodes, gpus)
        for i in range(gpus.size):
            n, g = int(nodes[i]), int(gpus[i])
            rows.append(
                (
                    j,
                    column[name],
                    g,
                    n,
                    best.batch[i],
                    best.local_batch[i],
                    best.accumulation[i],
                    best.throughput[i],
                    best.goodput[i],
                    label,
                    _matches(spec, name, g, n),
                )
            )
            label += 1
    return rows


def _usable(
    cands: Candidates,
    problem: ClusterArrays,
    specs: list[Elastic | None],
    pinned: BoolArray,
    reasons: dict[int, str],
) -> Candidates:
    """Drop what cannot run; say why for jobs left with nothing."""
    cap = np.array([np.inf if s is None or s.max_gpus is None else s.max_gpus for s in specs])
    good = cands.goodput > 0
    fits = (cands.gpus <= problem.gpu_count[cands.gpu]) & (cands.gpus <= cap[cands.job])
    keep = good & fits & (cands.current | ~pinned[cands.job])
    keep &= ~pinned[cands.job] | _best_of_job(cands, keep)
    had = np.bincount(cands.job, minlength=len(specs)) > 0
    any_good = np.bincount(cands.job, weights=good, minlength=len(specs)) > 0
    left = np.bincount(cands.job, weights=keep, minlength=len(specs)) > 0
    for j in np.flatnonzero(had & ~left).tolist():
        reasons[j] = TOO_WIDE if any_good[j] else NO_GOODPUT
    for j in np.flatnonzero(~had).tolist():
        reasons.setdefault(j, NO_GOODPUT)
    return cands.take(keep)


def _best_of_job(cands: Candidates, among: BoolArray) -> BoolArray:
    """Per job, its first candidate of the most goodput among those in `among`."""
    at = np.flatnonzero(among)
    order = at[np.lexsort((-cands.goodput[at], cands.job[at]))]
    first = np.ones(order.size, dtype=bool)
    first[1:] = cands.job[order][1:] != cands.job[order][:-1]
    out = np.zeros(cands.size, dtype=bool)
    out[order[first]] = True
    return out


def _restart_factors(specs: list[Elastic | None]) -> FloatArray:
    out = np.ones(len(specs))
    for j, s in enumerate(specs):
        if s is None or s.current is None or s.age is None or s.restart_seconds <= 0:
            continue
        age, cost = s.age, s.restart_seconds
        if age >= cost:
            out[j] = max(age - s.restarts * cost, 0.0) / (age + cost)
    return out


def _normalized(cands: Candidates, factor: FloatArray, running: BoolArray) -> FloatArray:
    """Goodput over the job's smallest, times the re-allocation factor where it restarts."""
    if cands.size == 0:
        return np.zeros(0)
    firsts = cands.start[:-1][np.diff(cands.start) > 0]
    least = np.minimum.reduceat(cands.goodput, firsts)
    per_job = np.zeros(cands.start.size - 1)
    per_job[cands.job[firsts]] = least
    scaled = cands.goodput / per_job[cands.job]
    restarts = running[cands.job] & ~cands.current
    out: FloatArray = np.where(restarts, scaled * factor[cands.job], scaled)
    return out
