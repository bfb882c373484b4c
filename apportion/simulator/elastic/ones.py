"""ONES's online evolutionary search (Bian et al., SC'21, §3.2–§3.3) as a decider of the elastic
simulation: the baseline the `ones` policy solves exactly.

A schedule is a genome over the cluster's GPUs: the job each GPU runs (or none). A job keeps its
initial per-GPU batch b_j (M0), so c_j GPUs train at B_j = c_j·b_j ≤ R_j, its batch-size limit.
A population of K schedules (K = the cluster's GPUs) evolves every round, `generations` times:

- refresh: drop finished jobs, shrink jobs above their limit, give each new job one GPU (taken
  from the longest-running jobs if none is idle), then fill idle GPUs one job at a time, drawn
  with probability proportional to its utilization gain (smallest remaining utilization first);
- uniform crossover: K random pairs of parents, each GPU inherited by a random child;
- uniform mutation: K random schedules, each job preempted with rate θ, its GPUs refilled;
- reorder: each job's GPUs packed onto consecutive GPUs of one type (fewest nodes);
- selection: the K best by the score of Eq. 8, Σ_running T_j·c_j with T_j = Y_j / X_j.

The best schedule is deployed, except that a running job keeps its GPUs until it has trained an
epoch since it last changed (§3.2 "Update": each job finishes an epoch before it is rescheduled;
read per job, since a global rule would freeze the cluster for hours behind one long epoch).
Limits (§3.3.2): a new job starts on one GPU's worth; a
waiting job asks for what it had, halved each round it is rejected; after each epoch
R' = ⌈2R / ⌈σ·T_processed + 1⌉⌉ with σ the arrival rate.

In this simulator ONES knows each job's remaining work exactly (no Beta-regression estimate: its
score is then deterministic, so selection keeps the top K), and estimates throughput X with the
same model the other policies use (the job's fitted model, Sia's projection across types, or
linear scaling of the type's one-GPU rate before it has one); it ignores statistical efficiency
(it assumes linear learning-rate scaling keeps progress per sample). Reconfiguring costs the
same checkpoint-restore time as for every other policy here (ONES's own scaling is cheaper).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from apportion.formulations.elastic.goodput import throughput
from apportion.mechanism.elastic import Want, place
from apportion.refdata.sia import ClusterSpec
from apportion.simulator.elastic.engine import Decision, node_list
from apportion.simulator.elastic.jobs import ElasticJob
from apportion.solver.arraytypes import IntArray

IDLE = -1


@dataclass
class Limits:
    """ONES's per-job batch-size limit and what it needs to update it."""

    limit: float
    epochs: int = 0
    before: float = 0.0  # the limit when it was last preempted
    rejected: bool = False


@dataclass
class OnesSearch:
    cluster: ClusterSpec
    generations: int = 2
    population_size: int | None = None  # None: as many as GPUs (the paper's suggestion)
    mutation: float = 0.1
    seed: int = 0
    name: str = "ones_search"
    population: list[IntArray] = field(default_factory=list)
    limits: dict[str, Limits] = field(default_factory=dict)
    deployed: IntArray = field(default_factory=lambda: np.zeros(0, np.int64))
    previous: list[str] = field(default_factory=list)  # last round's jobs, by index
    start: float = float("inf")  # the first arrival seen

    def __post_init__(self) -> None:
        self.rng = np.random.default_rng(self.seed)
        nodes = node_list(self.cluster)
        self.gpu_node = [n for n, g, _ in nodes for _ in range(g)]
        self.gpu_type = np.array([t for _, g, t in nodes for _ in range(g)])
        self.kinds = sorted(set(self.gpu_type.tolist()))
        self.kind = np.array([self.kinds.index(t) for t in self.gpu_type], dtype=np.int64)
        names = list(dict.fromkeys(self.gpu_node))
        self.node_index = np.array([names.index(n) for n in self.gpu_node], dtype=np.int64)
        self.size = len(self.gpu_node)
        self.deployed = np.full(self.size, IDLE, np.int64)
        self.rates: dict[tuple[str, str, int, int], float] = {}

    # — the decider ————————————————————————————————————————————————————————————————

    def decide(self, now: float, active: list[ElasticJob]) -> Decision:
        self.jobs = active
        self.index = {job.name: i for i, job in enumerate(active)}
        self._update_limits(now, active)
        self.most = np.array([self._limit_gpus(job) for job in active], dtype=np.int64)
        ids = self._translate(self.deployed, self.previous)
        if not self.population:
            self.population = [self._random(ids) for _ in range(self.population_size or self.size)]
        else:
            self.population = [self._translate(g, self.previous) for g in self.population]
        for _ in range(self.generations):
            self._evolve()
        best = min(self.population, key=self._score)
        ids = self._deploy(best, ids, active)
        self.deployed = ids
        self.previous = [job.name for job in active]
        self._rejections(active, ids)
        return self._decision(ids)

    # — one generation ————————————————————————————————————————————————————————————

    def _evolve(self) -> None:
        parents = [self._refresh(g.copy()) for g in self.population]
        k = len(parents)
        children = []
        for _ in range(k):
            a, b = (parents[i] for i in self.rng.integers(0, k, 2))
            swap = self.rng.random(self.size) < 0.5
            children += [np.where(swap, b, a), np.where(swap, a, b)]
        mutants = [self._mutate(parents[i].copy()) for i in self.rng.integers(0, k, k)]
        pool = [self._reorder(self._refresh(self._repair(g))) for g in children + mutants]
        scored = sorted(parents + pool, key=self._score)
        self.population = scored[:k]

    def _refresh(self, genome: IntArray) -> IntArray:
        """Shrink jobs above their limit; start new jobs on one GPU; fill what is idle."""
        count = np.bincount(genome[genome >= 0], minlength=len(self.jobs))
        for j in np.flatnonzero(count > self.most[: count.size]).tolist():
            held = np.flatnonzero(genome == j)
            genome[held[int(self.most[j]) :]] = IDLE
        new = [j for j, job in enumerate(self.jobs) if job.first_start is None]
        for j in new:
            if (genome == j).any():
                continue
            idle = np.flatnonzero(genome == IDLE)
            if idle.size == 0:
                idle = self._take_from_longest(genome)
            if idle.size:
                genome[idle[0]] = j
        return self._fill(genome)

    def _fill(self, genome: IntArray) -> IntArray:
        """Give idle GPUs to jobs drawn by their utilization gain (drawn once per fill, each
        job at most once) until none is left."""
        n = len(self.jobs)
        on = genome >= 0
        count = np.bincount(genome[on], minlength=n)
        kind_of = np.full(n, -1, np.int64)
        kind_of[genome[on][::-1]] = self.kind[on][::-1]
        room = np.bincount(self.kind[~on], minlength=len(self.kinds))
        gains = np.array([self._gain(j, count[j], kind_of[j], room) for j in range(n)])
        while room.sum() and (gains > 0).any():
            j = int(self.rng.choice(n, p=gains / gains.sum()))
            gains[j] = 0.0
            k = kind_of[j] if kind_of[j] >= 0 else int(np.argmax(room))
            slots = np.flatnonzero((genome == IDLE) & (self.kind == k))
            take = slots[: max(int(self.most[j] - count[j]), 0)]
            genome[take] = j
            room[k] -= take.size
        return genome

    def _gain(self, j: int, have: int, k: int, room: IntArray) -> float:
        """1 / (T_j · c_j) at the job's limit on the idle GPUs of its type (the roomiest one
        for a job without GPUs): the smallest remaining utilization first; 0 when it cannot
        grow."""
        k = k if k >= 0 else int(np.argmax(room))
        grow = min(int(self.most[j]) - have, int(room[k]))
        if grow <= 0:
            return 0.0
        gpus = have + grow
        kind = self.kinds[k]
        rate = self._rate(j, kind, gpus, self._nodes_for(kind, gpus))
        return 0.0 if rate <= 0 else rate / (self._work(j) * gpus)

    def _mutate(self, genome: IntArray) -> IntArray:
        for j in np.unique(genome[genome >= 0]).tolist():
            if self.rng.random() < self.mutation:
                genome[genome == j] = IDLE
        return self._fill(genome)

    def _repair(self, genome: IntArray) -> IntArray:
        """A job's GPUs on one type only (the type holding most of them)."""
        on = genome >= 0
        if not on.any():
            return genome
        types = len(self.kinds)
        per = np.bincount(genome[on] * types + self.kind[on], minlength=len(self.jobs) * types)
        keep = np.argmax(per.reshape(-1, types), axis=1)
        wrong = on & (keep[np.maximum(genome, 0)] != self.kind)
        genome[wrong] = IDLE
        return genome

    def _reorder(self, genome: IntArray) -> IntArray:
        """Each type's jobs on consecutive GPUs, in order of first occurrence."""
        out = np.full(self.size, IDLE, np.int64)
        for kind in np.unique(self.gpu_type):
            slots = np.flatnonzero(self.gpu_type == kind)
            mine = genome[slots]
            order = list(dict.fromkeys(mine[mine >= 0].tolist()))
            packed = np.concatenate(
                [np.full(int((mine == j).sum()), j, np.int64) for j in order]
                or [np.zeros(0, np.int64)]
            )
            out[slots[: packed.size]] = packed
        return out

    # — scores and estimates —————————————————————————————————————————————————————

    def _score(self, genome: IntArray) -> float:
        """Eq. 8: Σ over running jobs of remaining time × GPUs."""
        on = genome >= 0
        jobs = genome[on]
        if jobs.size == 0:
            return 0.0
        count = np.bincount(jobs)
        pairs = np.unique(np.column_stack([jobs, self.node_index[on]]), axis=0)
        nodes = np.bincount(pairs[:, 0], minlength=count.size)
        first = np.full(count.size, -1)
        first[jobs[::-1]] = np.flatnonzero(on)[::-1]
        total = 0.0
        for j in np.flatnonzero(count).tolist():
            kind = str(self.gpu_type[first[j]])
            rate = self._rate(j, kind, int(count[j]), int(nodes[j]))
            total += math.inf if rate <= 0 else self._work(j) / rate * count[j]
        return total

    def _work(self, j: int) -> float:
        """Y_j: samples left (exact)."""
        job = self.jobs[j]
        return max(job.remaining() * job.app.init_batch, 1e-9)

    def _rate(self, j: int, kind: str, gpus: int, nodes: int) -> float:
        """X_j: samples per second at its per-GPU batch on `gpus` GPUs of `kind`."""
        job = self.jobs[j]
        key = (job.name, kind, gpus, nodes)
        if key not in self.rates:
            self.rates[key] = self._estimate(job, kind, gpus, nodes)
        return self.rates[key]

    def _estimate(self, job: ElasticJob, kind: str, gpus: int, nodes: int) -> float:
        app = job.app
        local = min(app.init_batch, app.max_local_batch(kind))
        profiles = app.profiles
        source = kind if kind in job.params else next(iter(job.params), None)
        if source is None:
            return gpus * profiles[kind].single_gpu_throughput()
        ratio = profiles[kind].single_gpu_throughput() / profiles[source].single_gpu_throughput()
        return float(throughput(job.params[source], nodes, gpus, local)) * ratio

    # — limits, helpers ———————————————————————————————————————————————————————————

    def _limit_gpus(self, job: ElasticJob) -> int:
        """The most GPUs its batch-size limit allows at its per-GPU batch."""
        local = min(job.app.init_batch, min(job.app.max_local_batch(k) for k in job.app.profiles))
        return max(1, int(self.limits[job.name].limit // local))

    def _update_limits(self, now: float, active: list[ElasticJob]) -> None:
        first = min((job.arrival for job in active), default=now)
        self.start = min(self.start, first)
        # σ: the arrival rate so far (jobs per second), every job seen counted
        rate = len(self.limits.keys() | {job.name for job in active}) / max(now - self.start, 1.0)
        for job in active:
            state = self.limits.get(job.name)
            if state is None:
                self.limits[job.name] = Limits(float(job.app.init_batch), job.epoch)
                continue
            if job.epoch > state.epochs:
                processed = job.gpu_seconds / max(job.gpus, 1)
                shrink = math.ceil(rate * processed + 1)
                state.limit = min(math.ceil(2 * state.limit / shrink), job.app.max_batch)
                state.limit = max(state.limit, job.app.init_batch)
                state.epochs = job.epoch
            if state.rejected:
                state.limit = max(state.limit / 2, float(job.app.init_batch))
                state.rejected = False
        self.rates = {k: v for k, v in self.rates.items() if k[0] in self.index}

    def _rejections(self, active: list[ElasticJob], ids: IntArray) -> None:
        running = set(ids[ids >= 0].tolist())
        for j, job in enumerate(active):
            state = self.limits[job.name]
            if j not in running and job.first_start is not None:
                state.rejected = True

    def _deploy(self, best: IntArray, ids: IntArray, active: list[ElasticJob]) -> IntArray:
        """The best schedule, except that a running job keeps its GPUs until it has trained an
        epoch since it last changed (ONES: each job finishes an epoch before an update)."""
        frozen = [j for j, job in enumerate(active) if job.gpus and job.epochs_since_change < 1]
        if not frozen:
            return best.copy()
        out = np.where(np.isin(ids, frozen), ids, IDLE)
        free = out == IDLE
        out[free] = np.where(np.isin(best[free], frozen), IDLE, best[free])
        return self._repair(out)

    def _take_from_longest(self, genome: IntArray) -> IntArray:
        held = np.unique(genome[genome >= 0])
        if held.size == 0:
            return np.zeros(0, np.int64)
        longest = max(held.tolist(), key=lambda j: self.jobs[j].gpu_seconds)
        gpu = np.flatnonzero(genome == longest)[-1:]
        genome[gpu] = IDLE
        return gpu

    def _nodes_for(self, kind: str, gpus: int) -> int:
        return max(1, math.ceil(gpus / self.cluster.gpus_per_node[kind]))

    def _random(self, ids: IntArray) -> IntArray:
        genome = ids.copy()
        idle = np.flatnonzero(genome == IDLE)
        if idle.size and self.jobs:
            genome[idle] = self.rng.integers(0, len(self.jobs), idle.size)
        return self._reorder(self._refresh(self._repair(genome)))

    def _translate(self, genome: IntArray, names: list[str]) -> IntArray:
        """A genome over last round's job indices, over this round's (finished jobs idle)."""
        if genome.size == 0:
            return np.full(self.size, IDLE, np.int64)
        lookup = np.array([self.index.get(n, IDLE) for n in names] + [IDLE], dtype=np.int64)
        return np.where(genome >= 0, lookup[np.minimum(genome, len(names))], IDLE)

    def _decision(self, ids: IntArray) -> Decision:
        """Each job's GPU type, GPUs and node count from the schedule, enacted on nodes by the
        mechanism, which keeps a job that did not change where it runs (ONES scales only the
        workers that change)."""
        wanted: dict[str, Want] = {}
        for j in np.unique(ids[ids >= 0]).tolist():
            held = np.flatnonzero(ids == j)
            nodes = len({self.gpu_node[g] for g in held.tolist()})
            wanted[self.jobs[j].name] = Want(str(self.gpu_type[held[0]]), held.size, nodes)
        previous = {job.name: job.nodes for job in self.jobs if job.nodes}
        return place(node_list(self.cluster), wanted, previous).placements
