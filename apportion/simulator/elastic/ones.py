"""ONES (Bian et al., SC'21) as a decider of the elastic simulation, with the rules of its
scheduler's code (kurisusnowdeng/ones_sc21: `src/scheduler.py` `ONESScheduler`, `src/monitor.py`
`Monitor`, `src/controller.py` `Controller`, constants from `src/config.py`).

A schedule is a list over the cluster's GPUs: the job each runs, or none. Each round runs the
scheduler's loop body `generations` times (ONES's `run` repeats it every second; nothing it
observes changes inside a round). One loop (`ONESScheduler._schedule`, then `_update`):

- **executed jobs**: active, not new, with ≥ 2 completed epochs (`_scan_executed_jobs`); a job
  is new until its first start, or while stopped before 2 epochs (`Controller.get_new_jobs`).
  Only executed jobs are scored;
- **limit growth** (`Monitor.scale_up`): every running job with ≥ 2 epochs — ONES compares them
  with `last_epoch_scaled`, which its controller never writes (it writes `last_scaled_epoch`), so
  the count is from the job's start — doubles its limit L (from 1, at most the cluster) when it
  runs at L, and may grow by min(L, 4 × its request) − its GPUs;
- **scale-down** (`Monitor.scale_down`): the largest such job, if it holds ≥ half the cluster
  and has run longer than the median run time m of all started jobs, may hold the even number
  ⌈max(⌊2c / (t/m + 1)⌋, 1)⌉₂ this loop only (the next loop's growth overwrites it);
- **evolution**: K = 16 schedules; refresh (finished jobs out, each job cut to what it may hold,
  its first GPU kept), K/2 uniform crossovers (each GPU swapped with probability 0.5, a child
  keeps what each job may hold), K mutations (each executed job dropped with probability 0.3),
  then each candidate **padded** (`_pad`: new jobs one GPU each in arrival order while GPUs are
  idle; then executed jobs by least remaining work at one GPU first, each up to what it may hold;
  then again up to its limit L) and **reordered** into contiguous blocks that take the fewest
  GPUs from other running jobs (`_reorder`, its edit-distance search); the K with the least
  score Σ c_j · Y_j / X_j(c_j) are kept (`_select`), Y_j the samples left and X_j(c) the
  job's measured throughput at c GPUs (the mean of its last 5 measurements, linear in c
  between and beyond measured sizes, through 0 at 0: `Monitor.get_throughput`);
- **update** (`_update`): a job whose new GPUs are all idle and that is not running starts at
  once; every other change waits until every running job it moves or stops has completed an
  epoch since it was last scheduled; then stopped jobs keep L as what they may hold on resuming,
  and waiting ones not placed halve it (`Monitor.scale_in`);
- **batch size** (`Controller._elastic_batch_size_and_lr`): the per-GPU batch stays the job's
  initial batch M0 while the learning rate scales with the GPUs, up to ONES's `max_lr`, read
  here as the model's largest batch: c GPUs train at c·M0, or c·⌊M_max / c⌋ beyond M_max.

This simulator's differences: GPUs are ordered by type and node, and a job's block lies within
one GPU type (ONES assumes one type; `ones_layout`), packed greedily where no such layout
exists; ONES's Beta-regression estimate of a job's progress is replaced by the exact remaining
work; throughput is measured over each round a job ran; a change of GPUs costs the same
checkpoint-restore time as for every other policy here (ONES's own scaling is cheaper).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from apportion.refdata.sia import ClusterSpec
from apportion.simulator.elastic.engine import Decision, node_list
from apportion.simulator.elastic.jobs import ElasticJob
from apportion.simulator.elastic.ones_layout import IDLE, reorder
from apportion.solver.arraytypes import IntArray

EPOCHS_BEFORE_SCALING = 2  # config.num_epochs_before_next_scaling
UPDATE_INTERVAL = 1  # config.update_interval (epochs)
REQUEST_FACTOR = 4  # Monitor.scale_up: at most 4 × the GPUs a job asks for
SCALE_DOWN_FACTOR = 1.0  # config.scale_down_factor (its last assignment)
MEASUREMENTS = 5  # config.num_monitored_throughputs


@dataclass
class Tracked:
    """What ONES's controller and monitor keep of a job."""

    id: int
    request: int
    status: str = "submitted"  # submitted, running, stopped, complete
    waiting: str | None = "start"  # start, resuming, scaling, or not waiting
    waiting_size: int = 0
    size: int = 0  # GPUs held
    limit: int = 1  # Monitor's max_size
    last_scheduled: int = 0  # epochs when last (re)scheduled
    predicted: bool = False
    run_time: float = 0.0
    lost: float = 0.0  # restart seconds seen so far
    epochs: int = 0
    progress: float = 0.0
    remaining: float = 0.0
    rates: dict[int, list[float]] = field(default_factory=lambda: {0: [0.0]})
    curve: tuple[np.ndarray, np.ndarray] | None = None

    def may_hold(self) -> int:
        """`ONESScheduler._get_ones_max_size`."""
        if self.status == "running":
            return self.size + (self.waiting_size if self.waiting == "scaling" else 0)
        if self.status == "stopped" and self.waiting == "resuming":
            return self.waiting_size
        return 0

    def throughput(self, gpus: int) -> float:
        """`Monitor.get_throughput`: linear through the measured sizes, extrapolated (0
        before any measurement, where ONES's interpolation would fail)."""
        if self.curve is None:
            sizes = np.array(sorted(self.rates), dtype=float)
            means = np.array([np.mean(self.rates[int(s)][-MEASUREMENTS:]) for s in sizes])
            self.curve = sizes, means
        sizes, means = self.curve
        if gpus in self.rates:
            return float(means[sizes == gpus][0])
        if sizes.size < 2:
            return 0.0
        hi = int(np.clip(np.searchsorted(sizes, gpus), 1, sizes.size - 1))
        lo = hi - 1
        slope = (means[hi] - means[lo]) / (sizes[hi] - sizes[lo])
        return float(means[lo] + slope * (gpus - sizes[lo]))


@dataclass
class OnesSearch:
    cluster: ClusterSpec
    requests: Mapping[str, int] = field(default_factory=dict)  # GPUs each job asks for
    generations: int = 1  # loops of ONES's scheduler per round
    population_size: int = 16  # config.population_size
    crossover: float = 0.5  # config.crossover_probability
    mutation: float = 0.3  # config.mutate_rate
    seed: int = 0
    name: str = "ones_search"
    tracked: dict[str, Tracked] = field(default_factory=dict)
    population: list[IntArray] = field(default_factory=list)
    last_seen: float | None = None

    def __post_init__(self) -> None:
        self.rng = np.random.default_rng(self.seed)
        nodes = node_list(self.cluster)
        self.gpu_node = [n for n, g, _ in nodes for _ in range(g)]
        types = [t for _, g, t in nodes for _ in range(g)]
        self.size = len(types)
        # contiguous runs of one GPU type: a job's block lies in one
        cuts = [i for i in range(1, self.size) if types[i] != types[i - 1]]
        self.segments = list(zip([0, *cuts], [*cuts, self.size], strict=True))
        self.schedule = np.full(self.size, IDLE, np.int64)
        self.jobs: list[Tracked] = []

    # — the decider ————————————————————————————————————————————————————————————————

    def decide(self, now: float, active: list[ElasticJob]) -> Decision:
        self.observe(now, active)
        for _ in range(self.generations):
            self.loop()
        return self.decision(active)

    def observe(self, now: float, active: list[ElasticJob]) -> None:
        """What ONES's workers report: epochs, samples, throughput at the GPUs held."""
        span = 0.0 if self.last_seen is None else now - self.last_seen
        self.last_seen = now
        alive = {job.name for job in active}
        for name, t in self.tracked.items():
            if name not in alive and t.status != "complete":
                t.status, t.waiting, t.size = "complete", None, 0
                self.schedule[self.schedule == t.id] = IDLE
        for job in active:
            if job.name not in self.tracked:
                t = Tracked(len(self.jobs), max(1, int(self.requests.get(job.name, 1))))
                self.tracked[job.name] = t
                self.jobs.append(t)
            t = self.tracked[job.name]
            if t.size and span > 0:
                t.run_time += span
                busy = span - (job.lost_seconds - t.lost)
                if job.gpus and busy > 0 and job.progress > t.progress:
                    t.rates.setdefault(job.gpus, []).append((job.progress - t.progress) / busy)
                    t.curve = None
            t.lost = job.lost_seconds
            t.epochs, t.progress, t.remaining = job.epoch, job.progress, job.remaining()

    def decision(self, active: list[ElasticJob]) -> Decision:
        """Node → GPUs per job from the schedule, each job at ONES's batch for its GPUs."""
        out: Decision = {}
        for job in active:
            held = np.flatnonzero(self.schedule == self.tracked[job.name].id)
            if held.size:
                nodes: dict[str, int] = {}
                for g in held.tolist():
                    nodes[self.gpu_node[g]] = nodes.get(self.gpu_node[g], 0) + 1
                out[job.name] = nodes
                app, c = job.app, int(held.size)
                fits = c * app.init_batch <= app.max_batch
                job.fixed_batch = c * (app.init_batch if fits else app.max_batch // c)
        return out

    # — one loop of ONES's scheduler ——————————————————————————————————————————————

    def loop(self) -> None:
        active = [t for t in self.jobs if t.status != "complete"]
        if not active:
            return
        if not self.population:  # `_initialize`: the jobs there are, shuffled, one GPU each
            self.holds = np.zeros(len(self.jobs) + 1, np.int64)
            self.population = [self._shuffled() for _ in range(self.population_size)]
            self._update(self.population[0])
        self.rescale(active)
        self.population = self._evolve()
        self._update(self.population[0])

    def rescale(self, active: list[Tracked]) -> None:
        """Which jobs are new or executed, and what each may hold this loop."""
        self.new = [t.id for t in active if self._is_new(t)]
        executed = [t for t in active if t.id not in self.new and t.epochs >= 2]
        for t in executed:
            t.predicted = True
        self.executed = [t.id for t in executed]
        running = [t for t in active if t.status == "running"]
        eligible = [t for t in running if t.epochs >= EPOCHS_BEFORE_SCALING]
        for t in eligible:
            self._grow(t)
        largest = max(eligible, key=lambda t: t.size, default=None)  # first of the largest
        if largest is not None and largest.size >= self.size // 2:
            self._shrink(largest)

    def _is_new(self, t: Tracked) -> bool:
        stopped = t.status == "stopped" and t.waiting == "resuming"
        return t.status == "submitted" or (stopped and t.epochs < EPOCHS_BEFORE_SCALING)

    def _grow(self, t: Tracked) -> None:
        if t.size == t.limit:
            t.limit = min(self.size, t.limit * 2)
        t.waiting = "scaling"
        t.waiting_size = min(t.limit, t.request * REQUEST_FACTOR) - t.size

    def _shrink(self, t: Tracked) -> None:
        started = [u.run_time for u in self.jobs if u.status != "submitted"]
        median = float(np.median(started))
        if median <= 0 or t.run_time <= median:
            return
        most = max(int(2 * t.size / (SCALE_DOWN_FACTOR * t.run_time / median + 1)), 1)
        t.waiting = "scaling"
        t.waiting_size = (most // 2 + most % 2) * 2 - t.size

    # — evolution ————————————————————————————————————————————————————————————————

    def _evolve(self) -> list[IntArray]:
        k = self.population_size
        self.layouts: dict[tuple[tuple[int, int], ...], IntArray] = {}
        self.holds = np.array([t.may_hold() for t in self.jobs] + [0], dtype=np.int64)
        pool = [self._refresh(g) for g in self.population]
        for _ in range(k // 2):
            a, b = self.rng.choice(len(pool[:k]), 2, replace=False)
            pool += list(self._cross(pool[a], pool[b]))
        pool += [self._mutate(pool[i]) for i in range(k)]
        pool = [self._reorder(self._pad(g)) for g in pool]
        scores = np.array([self._score(g) for g in pool])
        return [pool[i] for i in np.argsort(scores)[:k]]  # its ties as ONES breaks them

    def _shuffled(self) -> IntArray:
        genome = np.full(self.size, IDLE, np.int64)
        new = self.rng.permutation([t.id for t in self.jobs if t.status == "submitted"])
        genome[: min(new.size, self.size)] = new[: self.size]
        return genome

    def _refresh(self, genome: IntArray) -> IntArray:
        g = genome.copy()
        g[np.isin(g, [t.id for t in self.jobs if t.status == "complete"])] = IDLE
        rank = _rank(g)
        g[(g >= 0) & (rank > 0) & (rank >= self.holds[g])] = IDLE
        return g

    def _cross(self, first: IntArray, second: IntArray) -> tuple[IntArray, IntArray]:
        swap = self.rng.random(self.size) < self.crossover
        out = []
        for a, b in ((first, second), (second, first)):
            child = np.where(swap, b, a)
            child[(child >= 0) & (_rank(child) >= self.holds[child])] = IDLE
            out.append(child)
        return out[0], out[1]

    def _mutate(self, genome: IntArray) -> IntArray:
        g = genome.copy()
        for j in dict.fromkeys(g[g >= 0].tolist()):
            drop = self.rng.random() < self.mutation
            if drop and self.jobs[j].epochs >= EPOCHS_BEFORE_SCALING:
                g[g == j] = IDLE
        return g

    def _pad(self, genome: IntArray) -> dict[int, int]:
        """GPUs per job: the schedule's, then new jobs, then executed jobs up to what they
        may hold, then up to their limit, while GPUs are idle."""
        alloc = {j: int((genome == j).sum()) for j in dict.fromkeys(genome[genome >= 0].tolist())}
        k = sum(alloc.values())
        for j in self.new:
            if k >= self.size:
                break
            if j not in alloc:
                alloc[j], k = 1, k + 1
        claims: tuple[Callable[[Tracked], int], ...] = (Tracked.may_hold, lambda t: t.limit)
        for most in claims:
            waiting = [j for j in self.executed if j not in alloc or alloc[j] < most(self.jobs[j])]
            order = np.argsort([self._least(j) for j in waiting])
            for i in order.tolist():
                if k >= self.size:
                    break
                j = waiting[i]
                grow = min(most(self.jobs[j]) - alloc.get(j, 0), self.size - k)
                alloc[j], k = alloc.get(j, 0) + grow, k + grow
        return {j: n for j, n in alloc.items() if n > 0}

    def _least(self, j: int) -> float:
        x = self.jobs[j].throughput(1)
        return self.jobs[j].remaining / x if x else math.inf

    def _reorder(self, alloc: dict[int, int]) -> IntArray:
        """The layout of an allocation (the same one recurs across the population: each is
        laid out once a loop, against the schedule that loop started from)."""
        key = tuple(alloc.items())
        if key not in self.layouts:
            self.layouts[key] = reorder(alloc, self.schedule, self.segments)
        return self.layouts[key].copy()

    def _score(self, genome: IntArray) -> float:
        """`_select`: Σ over scored jobs of GPUs × samples left ÷ throughput at those GPUs."""
        total = 0.0
        for j, n in zip(*np.unique(genome[genome >= 0], return_counts=True), strict=True):
            t = self.jobs[int(j)]
            if t.predicted:
                x = t.throughput(int(n))
                total += math.inf if x == 0 else t.remaining * int(n) / x
        return total

    # — deployment ————————————————————————————————————————————————————————————————

    def _update(self, dst: IntArray) -> None:
        src = self.schedule
        now = _placement(src)
        wanted = _placement(dst)
        starts = [j for j in wanted if j not in now and (src[wanted[j]] == IDLE).all()]
        moved = [j for j in now if wanted.get(j) != now[j]]
        ready = all(
            self.jobs[j].epochs >= self.jobs[j].last_scheduled + UPDATE_INTERVAL for j in moved
        )
        new = dst.copy()
        if not ready:
            new = src.copy()
            for j in starts:
                new[wanted[j]] = j
        else:
            for t in self.jobs:
                if t.waiting == "resuming" and t.id not in wanted and t.waiting_size > 1:
                    t.waiting_size //= 2
                    t.limit = t.waiting_size
        for j in now:
            if not (new == j).any():
                t = self.jobs[j]
                t.status, t.size, t.waiting, t.waiting_size = "stopped", 0, "resuming", t.limit
        for j, held in _placement(new).items():
            t = self.jobs[j]
            if held != now.get(j) or t.status != "running":
                t.status, t.size, t.waiting, t.waiting_size = "running", len(held), None, 0
        if not np.array_equal(new, src):
            for j in _placement(new):
                self.jobs[j].last_scheduled = self.jobs[j].epochs
        self.schedule = new


def _placement(schedule: IntArray) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for i, j in enumerate(schedule.tolist()):
        if j >= 0:
            out.setdefault(j, []).append(i)
    return out


def _rank(genome: IntArray) -> IntArray:
    """Each GPU's place among its job's GPUs, in order (0 for the first)."""
    order = np.argsort(genome, kind="stable")
    sorted_ = genome[order]
    starts = np.r_[0, np.flatnonzero(np.diff(sorted_)) + 1]
    first = np.repeat(starts, np.diff(np.r_[starts, sorted_.size]))
    rank = np.empty_like(genome)
    rank[order] = np.arange(genome.size) - first
    return rank
