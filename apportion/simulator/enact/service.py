"""What a Tiresias policy is told at a decision point (schedule enactment): the cluster's nodes,
where running jobs run, and each job's attained service, time waited and first start, kept as a
scheduler keeps them.

A job's attained service is the GPU-seconds it has held since it last entered the top queue (at
arrival, or when an answer promoted it); its waiting time counts the seconds it waited since it
first ran after that (Tiresias's simulator counts δ_J the same way: a job that never ran is not
starving). An answer's `promoted` jobs start both counts again. Tensor sizes come from the job's
model (`refdata.tiresias`), as Tiresias's profiler would measure them.

Each job's place in its queue (`queue_order`) is kept as Tiresias's simulator keeps its queue
lists: a job joins the back of its queue when it arrives or enters another queue (a demotion
past a queue limit, or a promotion back to the top), and after each decision the jobs that run
move ahead of those that wait, each group keeping its order. Queues are counted with the
policy's `thresholds` (the paper's when the options give none).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from apportion.formulations.tiresias.options import PAPER_THRESHOLDS
from apportion.formulations.tiresias.queues import queue_of
from apportion.simulator.clients import Reply
from apportion.simulator.snapshots import cluster_part
from apportion.simulator.state import JobStates, Running, Step
from apportion.solver.arraytypes import IntArray


class ServiceClock:
    def __init__(self, table: JobStates, options: Mapping[str, Any]) -> None:
        from apportion.refdata.tiresias import tensor_sizes

        n = len(table.ids)
        self.table = table
        self.limits = np.asarray(options.get("thresholds", PAPER_THRESHOLDS), dtype=float)
        self.place = np.full(n, np.nan)  # place in its queue, NaN before it joins one
        self.queue = np.full(n, -1, dtype=np.int64)  # the queue it holds its place in
        self.joined = 0  # jobs that have joined a queue's back
        self.base = np.zeros(n)  # GPU-seconds held when the job last entered the top queue
        self.waited = np.zeros(n)
        self.ran = np.zeros(n, dtype=bool)  # has run since it last entered the top queue
        self.tensors = [tensor_sizes(job.workload_class) for job in table.trace.jobs]

    def attained(self, jobs: IntArray) -> Any:
        return self.table.gpu_seconds[jobs] - self.base[jobs]

    def after(self, step: Step, running: Running) -> None:
        """Charge the interval: waiting to the jobs that have run and did not run in it."""
        active = self.table.active()
        idle = np.setdiff1d(np.union1d(active, step.finished), running.jobs)
        idle = idle[self.ran[idle]]
        self.waited[idle] += step.end - step.start
        self.ran[running.jobs] = True

    def arrange(self, jobs: IntArray) -> None:
        """Before a decision: jobs new to their queue join its back, in snapshot order."""
        queue = queue_of(self.attained(jobs), self.limits)
        new = jobs[np.isnan(self.place[jobs]) | (queue != self.queue[jobs])]
        # Places left by `settle` are below the job count; the back is beyond every one.
        self.place[new] = len(self.place) + self.joined + np.arange(new.size)
        self.joined += new.size
        self.queue[jobs] = queue

    def settle(self, jobs: IntArray, running: IntArray) -> None:
        """After a decision: in each queue, the jobs that run ahead of those that wait."""
        waits = ~np.isin(jobs, running)
        order = np.lexsort((self.place[jobs], waits, self.queue[jobs]))
        self.place[jobs[order]] = np.arange(order.size, dtype=float)

    def promote(self, answer: Reply) -> None:
        index = self.table.index
        for job_id, metrics in answer.metrics.items():
            if metrics.get("promoted"):
                j = index[job_id]
                self.base[j] = self.table.gpu_seconds[j]
                self.waited[j] = 0.0
                self.ran[j] = False
                self.queue[j] = 0  # joins the top queue's back, as the answer placed it
                self.place[j] = len(self.place) + self.joined
                self.joined += 1

    def snapshot(
        self,
        jobs: IntArray,
        now: float,
        placements: Mapping[int, Mapping[str, int]],
        extra: Mapping[str, Any],
    ) -> dict[str, Any]:
        table = self.table
        trace_jobs = table.trace.jobs
        attained = self.attained(jobs).tolist()
        entries = []
        for position, j in enumerate(jobs.tolist()):
            job = trace_jobs[j]
            entry: dict[str, Any] = {
                "id": job.id,
                "scale_factor": job.scale_factor,
                "throughput": {k: v for k, v in job.throughput.items() if v > 0},
                "arrival_time": job.arrival,
                "attained_service": attained[position],
                "pending_seconds": float(self.waited[j]),
            }
            if not np.isnan(table.first_start[j]):
                entry["started_at"] = float(table.first_start[j])
            if not np.isnan(self.place[j]):
                entry["queue_order"] = float(self.place[j])
            if j in placements:
                entry["placement"] = dict(placements[j])
            if job.workload_class is not None:
                entry["workload_class"] = job.workload_class
            if self.tensors[j] is not None:
                entry["tensor_sizes"] = list(self.tensors[j])
            entries.append(entry)
        return {**cluster_part(table), **extra, "jobs": entries, "now": now}
