"""ONES's own scheduler (kurisusnowdeng/ones_sc21, `src/scheduler.py` `ONESScheduler` with its
`src/monitor.py` `Monitor` and `src/controller.py` `Controller`), loaded from a checkout of
that repository and run as a decider of apportion's elastic simulation.

Nothing of ONES is copied here: its modules are imported from the given directory with `torch`,
`rpyc` and `requests` replaced by empty stand-ins (its scheduling code uses none of them), its
clock replaced by the simulation's, and its controller's remote calls by a world that enacts
them at once: `run` places a job's workers on its GPUs (a scale-out or scale-in too), `stop`
releases them and parks the job as ONES's workers do on exit (waiting to resume with its limit),
and each round the world reports what the job's workers would: completed epochs, samples (the
job's statistical progress) and throughput at its GPUs, measured as `simulator.elastic.ones`
measures it. ONES's Beta-regression progress estimate is replaced by the exact progress, as in
apportion's baseline. Its loop body (`_schedule` then `_update`) runs `generations` times a
round, and a job trains at the batch ONES's `Controller._elastic_batch_size_and_lr` gives it.
"""

from __future__ import annotations

import importlib
import logging
import os
import random
import sys
import tempfile
import types
from typing import Any

import numpy as np

from apportion.refdata.sia import ClusterSpec
from apportion.simulator.elastic.engine import Decision, node_list
from apportion.simulator.elastic.jobs import ElasticJob

STUBBED = ("torch", "rpyc", "requests")


class _Anything(types.ModuleType):
    """A module whose every attribute is a class or callable doing nothing."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return type(name, (), {"__init__": lambda self, *a, **k: None})


class _Clock:
    """ONES's `time` module, on the simulation's clock."""

    def __init__(self) -> None:
        self.now = 0.0

    def time(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        return None


def load(path: str) -> dict[str, Any]:
    """ONES's `src` modules from the repository at `path`, with the stand-ins above."""
    for name in (
        "torch",
        "torch.nn",
        "torch.optim",
        "torch.distributions",
        "torch.distributions.beta",
        "torch.nn.modules",
        "torch.nn.modules.loss",
        "torch.utils",
        "torch.utils.data",
        "rpyc",
        "rpyc.utils",
        "rpyc.utils.server",
        "requests",
    ):
        sys.modules.setdefault(name, _Anything(name))
        parent, _, child = name.rpartition(".")
        if parent:  # `import torch.nn as nn` reads the attribute
            setattr(sys.modules[parent], child, sys.modules[name])
    sys.modules["torch.nn"].Module = object  # type: ignore[attr-defined]
    sys.modules["torch.nn.modules.loss"]._Loss = object  # type: ignore[attr-defined]
    logs, here, path = tempfile.mkdtemp(prefix="ones-logs-"), os.getcwd(), os.path.abspath(path)
    os.makedirs(os.path.join(logs, "log", "test"), exist_ok=True)
    os.chdir(logs)  # its loggers open files under log/test/ at import
    sys.path.insert(
        0, os.path.abspath(os.path.join(here, path)) if not os.path.isabs(path) else path
    )
    try:
        modules = {
            m: importlib.import_module(f"src.{m}") for m in ("config", "monitor", "scheduler")
        }
        modules["controller"] = importlib.import_module("src.controller")
    finally:
        os.chdir(here)
    for name in ("Scheduler", "Monitor", "Controller", "Workload"):
        logging.getLogger(name).setLevel(logging.ERROR)
    return modules


class OnesOwn:
    """ONES's scheduler behind the `Decider` protocol."""

    name = "ones_own"

    def __init__(
        self,
        modules: dict[str, Any],
        cluster: ClusterSpec,
        requests: dict[str, int],
        generations: int = 1,
        seed: int = 0,
    ) -> None:
        self.m, self.c = modules, modules["config"]
        self.requests, self.generations = requests, generations
        self.clock = _Clock()
        for name in ("monitor", "scheduler", "controller"):
            modules[name].time = self.clock
        self.nodes = node_list(cluster)
        self.world = _world_class(modules)(modules, self.nodes, self.clock)
        self.scheduler = modules["scheduler"].ONESScheduler("ONES", self.world)
        random.seed(seed)
        np.random.seed(seed)
        self.ids: dict[str, int] = {}
        self.seen: dict[str, tuple[float, float]] = {}  # progress, restart seconds last round
        self.started = False

    def decide(self, now: float, active: list[ElasticJob]) -> Decision:
        span = now - self.clock.now
        self.clock.now = now
        self._report(active, span)
        s = self.scheduler
        if not self.started:
            if not self.world.get_new_jobs():
                return {}
            s.population, s.schedule = s._initialize()
            self.started = True
        for _ in range(self.generations):
            if s._scan_active_jobs():
                s.population = s._schedule()
                s.schedule = s._update(s.schedule, s.population[0])
        return self._decision(active)

    def _report(self, active: list[ElasticJob], span: float) -> None:
        w, alive = self.world, {job.name for job in active}
        for name, j in self.ids.items():
            if name not in alive and w.jobs[j]["status"] != self.c.status_complete:
                w.finish(j)
        for job in active:
            if job.name not in self.ids:
                batch, largest = job.app.init_batch, job.app.max_batch
                self.ids[job.name] = w.submit(
                    [], 1, batch, 1.0, largest / batch, None, self.requests.get(job.name, 1)
                )
            j = self.ids[job.name]
            progress, lost = self.seen.get(job.name, (0.0, 0.0))
            busy = span - (job.lost_seconds - lost)
            mon = w.monitor.monitored_jobs[j]
            if job.gpus and busy > 0 and job.progress > progress:
                rate = (job.progress - progress) / busy
                mon["throughput"].setdefault(job.gpus, []).append(rate)
            w.jobs[j]["completed_epochs"] = job.epoch
            w.jobs[j]["completed_samples"] = mon["completed_samples"] = job.progress
            w.targets[j] = float(job.targets[-1])
            self.seen[job.name] = (job.progress, job.lost_seconds)

    def _decision(self, active: list[ElasticJob]) -> Decision:
        out: Decision = {}
        for job in active:
            j = self.ids[job.name]
            if self.world.jobs[j]["status"] != self.c.status_running:
                continue
            placement = self.world.running_jobs[j]["placement"]
            nodes: dict[str, int] = {}
            for node, _ in placement:
                nodes[self.nodes[node][0]] = nodes.get(self.nodes[node][0], 0) + 1
            out[job.name] = nodes
            per_gpu, _ = self.world._elastic_batch_size_and_lr(j, len(placement))
            job.fixed_batch = per_gpu * len(placement)
        return out


def _world_class(modules: dict[str, Any]) -> type:  # noqa: C901 (one class, several methods)
    controller, c = modules["controller"].Controller, modules["config"]

    class World(controller):  # type: ignore[misc, valid-type]
        """ONES's controller with its remote calls enacted at once on the simulated GPUs."""

        def __init__(self, modules: dict[str, Any], nodes: list[Any], clock: _Clock) -> None:
            self.cluster = [{"id": i, "num_gpus": g} for i, (_, g, _) in enumerate(nodes)]
            self.jobs: list[dict[str, Any]] = []
            self.running_jobs: list[dict[str, Any]] = []
            self.waiting_jobs: list[dict[str, Any]] = []
            self.monitoring, self.completed_jobs, self.clock = True, 0, clock
            self.mutex = modules["controller"].Lock()
            monitor = modules["monitor"].Monitor.__new__(modules["monitor"].Monitor)
            monitor.monitored_jobs = []
            monitor.jobs, monitor.running_jobs = self.jobs, self.running_jobs
            monitor.waiting_jobs = self.waiting_jobs
            monitor.predict_remaining_workload = self.predict
            self.monitor, self.targets = monitor, dict[int, float]()

        def predict(self, job_ids: list[int]) -> None:
            """The exact progress of the jobs ONES would ask its regression about."""
            for j in job_ids:
                mon = self.monitor.monitored_jobs[j]
                mon["predicted_progress"] = mon["completed_samples"] / self.targets[j]

        def get_gpu_status(self, node_id: int, local_rank: int) -> int | None:
            for job in self.running_jobs:
                if self.jobs[job["id"]]["status"] == c.status_running and (
                    (node_id, local_rank) in (job["placement"] or [])
                ):
                    return int(job["id"])
            return None

        def run(
            self, job_id: int, placement: list[Any], resume: bool = False, scale: Any = None
        ) -> None:
            job, running = self.jobs[job_id], self.running_jobs[job_id]
            job["status"] = c.status_running
            running["batch_size"], running["lr"] = self._elastic_batch_size_and_lr(
                job_id, len(placement)
            )
            self.waiting_jobs[job_id]["status"], self.waiting_jobs[job_id]["size"] = None, 0
            running["placement"], running["size"] = list(placement), len(placement)
            running["workers"] = {p: {"status": c.worker_running} for p in placement}
            if scale is None:
                running["start_time"] = self.clock.now

        def _release(self, job_id: int) -> None:
            job, running = self.jobs[job_id], self.running_jobs[job_id]
            job["run_time"] += self.clock.now - running["start_time"]
            running["workers"], running["placement"], running["size"] = {}, None, 0

        def stop(self, job_id: int) -> None:
            self.jobs[job_id]["status"] = c.status_stopped
            self._release(job_id)
            waiting = self.waiting_jobs[job_id]
            waiting["status"] = c.wait_for_resuming
            waiting["size"] = self.monitor.monitored_jobs[job_id]["max_size"]

        def finish(self, job_id: int) -> None:
            if self.jobs[job_id]["status"] == c.status_running:
                self._release(job_id)
            self.jobs[job_id]["status"] = c.status_complete
            self.jobs[job_id]["end_time"] = self.clock.now
            self.waiting_jobs[job_id]["status"] = None
            self.completed_jobs += 1

    return World
