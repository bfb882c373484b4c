"""An elastic job in the simulation, as Sia's simulator models it (the data's README §1–§8).

Truth: the job advances in statistical progress (optimizer steps at its initial batch M0): a step
at global batch M on placement P takes T_iter = step + s·(step − sync) seconds (`truth`) and
gains r(M) M0-steps (gradient statistics of its training run at the current epoch, interpolated
in M), slowed by the model's calibration. It completes when its progress reaches the last
epoch's target. A new placement holds its GPUs `restart_seconds` without progress (the first
one too).

Belief: what the scheduler knows is what the job has run: each (nodes, replicas, micro-batch) it
ran in is an observation of its GPU type's throughput model, refitted when a new one comes
(`formulations.elastic.fit`), and its latest gradient statistics. At each epoch and after each
round, an elastic job re-chooses its batch on its placement with that model (before it has one,
M = max(M0, b_min·R)); a rigid job keeps its batch size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from apportion.formulations.elastic.fit import fit_perf_params
from apportion.formulations.elastic.goodput import (
    JobModel,
    PerfParams,
    best_batch,
    gain,
    split_batch,
)
from apportion.refdata.sia import Application
from apportion.simulator.elastic.truth import Placement, truth

Observation = tuple[int, int, int]  # nodes, replicas, micro-batch
#: Where Sia's simulator stops a fit (its `fit_perf_params`): the models it acts on are these.
FIT_TOLERANCE = 1e-5


@dataclass
class ElasticJob:
    name: str
    app: Application
    arrival: float
    fixed_batch: int | None = None  # rigid: the trace's batch size
    #: The trace's batch size: Sia's scheduler values an elastic job's configurations up to it
    #: (`belief`), while the job itself trains at any batch up to its model's largest.
    target_batch: int | None = None
    progress: float = 0.0
    epoch: int = 0
    gpu: str | None = None
    placement: Placement = ()
    nodes: dict[str, int] = field(default_factory=dict)  # node → GPUs held
    micro: int = 0  # b
    steps: int = 0  # s, accumulation steps
    delay: float = 0.0  # restart time left
    restarts: int = -1  # Sia counts from the first start: 0 after it
    finish: float | None = None
    first_start: float | None = None
    gpu_seconds: float = 0.0
    lost_seconds: float = 0.0
    epochs_since_change: int = 0
    grad: tuple[float, float] | None = None
    seen: dict[str, dict[Observation, tuple[float, float]]] = field(default_factory=dict)
    params: dict[str, PerfParams] = field(default_factory=dict)
    targets: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def __post_init__(self) -> None:
        self.targets = self.app.epoch_targets()

    @property
    def gpus(self) -> int:
        return sum(self.placement)

    @property
    def done(self) -> bool:
        return self.finish is not None

    def remaining(self) -> float:
        """Progress left, in M0-steps."""
        return max(float(self.targets[-1]) - self.progress, 0.0)

    def grad_stats(self, batch: float) -> tuple[float, float]:
        """(|g|², tr Σ) at this epoch, interpolated in the batch between the measured runs."""
        runs = self.app.curves
        sizes = np.array([c.batch for c in runs], dtype=float)
        m = float(np.clip(batch, sizes[0], sizes[-1]))
        hi = int(np.searchsorted(sizes, m))  # the first measured batch ≥ m
        lo = hi if sizes[hi] == m else hi - 1
        e = min(self.epoch, runs[lo].grad_sqr.size - 1)
        if lo == hi:
            return float(runs[lo].grad_sqr[e]), float(runs[lo].grad_var[e])
        w = (m - sizes[lo]) / (sizes[hi] - sizes[lo])
        sqr = (1 - w) * runs[lo].grad_sqr[e] + w * runs[hi].grad_sqr[e]
        var = (1 - w) * runs[lo].grad_var[e] + w * runs[hi].grad_var[e]
        return float(sqr), float(var)

    def model(self, gpu: str) -> JobModel | None:
        """The scheduler's goodput model on `gpu`, None before the job ran there."""
        params = self.params.get(gpu)
        if params is None or self.grad is None:
            return None
        return JobModel(
            params,
            float(self.app.init_batch),
            float(self.app.max_batch),
            self.grad[0],
            self.grad[1],
            float(self.app.min_local_batch(gpu)),
            float(self.app.max_local_batch(gpu)),
        )

    def max_profiled_replicas(self, gpu: str) -> int:
        return max((key[1] for key in self.seen.get(gpu, {})), default=0)

    # — the scheduler's decisions ——————————————————————————————————————————————————

    def place(self, now: float, gpu: str | None, nodes: dict[str, int]) -> bool:
        """Run on `nodes` (node → GPUs) of type `gpu` from now (none: stop); True when that
        restarts it. As in Sia's simulator, only a new GPU type or a new shape (GPUs per node,
        in the order taken) restarts a job (it checkpoints and restores); other nodes of the
        same shape are taken over as they are, a restart under way included."""
        if gpu is None or not nodes:
            self.gpu, self.placement, self.nodes, self.delay = None, (), {}, 0.0
            return False
        shape = tuple(nodes.values())
        self.nodes = dict(nodes)
        if gpu == self.gpu and shape == self.placement:
            return False
        self.gpu, self.placement = gpu, shape
        self.delay = self.app.restart_seconds
        self.restarts += 1
        self.epochs_since_change = 0
        if self.first_start is None:
            self.first_start = now
        self.choose_batch()
        return True

    # — time passing ——————————————————————————————————————————————————————————————

    def advance(self, now: float, seconds: float) -> None:
        """Run from `now` for `seconds` (Sia's `Job.step`)."""
        if self.done or not self.placement or self.gpu is None:
            return
        gpus = self.gpus
        pause = min(self.delay, seconds)
        self.delay -= pause
        self.lost_seconds += pause
        self.gpu_seconds += pause * gpus
        clock, left = now + pause, seconds - pause
        while left > 0 and not self.done:
            rate = self._rate()
            if rate <= 0:  # nothing measured for this configuration: no progress
                break
            target = float(self.targets[self.epoch + 1])
            if self.progress + rate * left < target:
                self.progress += rate * left
                clock += left
                self.gpu_seconds += left * gpus
                left = 0.0
                break
            # Sia's simulator counts whole seconds to an epoch's end (its `Job.step`)
            used = min(float(round((target - self.progress) / rate)), left)
            self.progress, self.epoch = target, self.epoch + 1
            self.epochs_since_change += 1
            clock += used
            left -= used
            self.gpu_seconds += used * gpus
            if self.epoch >= self.app.epochs:
                self.finish = clock
                break
            self.choose_batch()
        if not self.done:
            self.choose_batch()

    def _rate(self) -> float:
        """M0-steps per second now, and what the step teaches the scheduler."""
        assert self.gpu is not None
        gpus = self.gpus
        batch = gpus * self.micro * (self.steps + 1)
        sqr, var = self.grad_stats(batch)
        timed = truth(self.app.name, self.gpu).step_time(self.placement, self.micro)
        if timed is None:
            return 0.0
        step, sync = timed
        self._observe((len(self.placement), gpus, self.micro), step, sync, (sqr, var))
        iteration = step + self.steps * (step - sync)
        r = float(gain(batch, self.app.init_batch, sqr, var))
        return r / iteration / self.app.slowdown

    def _observe(
        self, key: Observation, step: float, sync: float, grad: tuple[float, float]
    ) -> None:
        assert self.gpu is not None
        self.grad = grad
        seen = self.seen.setdefault(self.gpu, {})
        if key in seen or step <= sync:
            return
        seen[key] = (step, sync)
        # Sia refits at every new observation, each fit from the same starting point
        n, r, b = (np.array(v, dtype=float) for v in zip(*seen, strict=True))
        times = np.array(list(seen.values()))
        self.params[self.gpu] = fit_perf_params(
            n, r, b, times[:, 0], times[:, 1], tolerance=FIT_TOLERANCE
        )

    def choose_batch(self) -> None:
        """Micro-batch and accumulation steps on the current placement (Sia's
        `update_local_bsz`)."""
        assert self.gpu is not None
        app, gpus = self.app, self.gpus
        measured = truth(app.name, self.gpu)
        cap = measured.max_local_batch(self.placement)
        model = self.model(self.gpu)
        if self.fixed_batch is not None or model is None:
            batch = self.fixed_batch or max(app.init_batch, app.min_local_batch(self.gpu) * gpus)
            micro, steps = split_batch(
                np.array([float(batch)]), np.array([float(gpus)]), app.init_batch, cap
            )
            self.micro, self.steps = int(micro[0]), int(steps[0])
        else:
            bounded = replace(model, max_local_batch=float(cap))
            best = best_batch(bounded, [len(self.placement)], [gpus])
            if best.goodput[0] > 0:
                self.micro, self.steps = int(best.local_batch[0]), int(best.accumulation[0])
            else:
                self.micro, self.steps = app.min_local_batch(self.gpu), 0
        widest = measured.max_local_for_replicas(gpus)
        if widest is not None:
            self.micro = min(self.micro, widest)
        self.micro = max(1, min(self.micro, math.floor(app.max_batch / (gpus * (self.steps + 1)))))
