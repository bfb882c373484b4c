"""Baselines: the classic schedulers the seed papers compare against, answering the same
requests as apportion's policies (a `Decider`), so one simulator runs them all.

Each ranks the active jobs by a key and hands GPUs out greedily in that order: a job takes the
fastest type with room for its gang (staying where it runs when that is as fast); a job with no
room waits and later jobs may take what is left (backfill). The answer is
an allocation of 0/1 time fractions, enacted by the same round mechanism as any policy.

| name | key (smallest first) | from |
|---|---|---|
| `fifo_baseline` | arrival | FIFO; non-preemptive by default (running jobs first) |
| `srtf` | remaining time at the job's fastest type | SRTF (Chronus's choice for best-effort) |
| `las` | attained service: seconds run | LAS |
| `2d_las` | queue of GPUs × seconds run (thresholds), then first start | Tiresias's 2D-LAS |
| `edf` | earliest deadline (jobs without one after, by arrival) | EDF |

`max_min_agnostic` is apportion's `max_min_fairness` with `heterogeneity_aware=false` (Gavel's
heterogeneity-agnostic LAS), resolved in `simulator.policies`.

Options (`-o key=value`): `preemptive` (true/false), for `2d_las` `thresholds`, a list of
GPU-second queue limits (default [3600, 36000]: one and ten GPU-hours), and on a trace with
placement rules (DeepShare's) `placement`: `reference` (the default: the widest allowed shape
on the lowest-numbered nodes with room, as DeepShare's baselines place) or `pack` (the fewest
nodes, fullest first), see `simulator.enact.rules`.

On such a trace a baseline is enacted in placement mode: every round it ranks every active job
and the jobs are placed node by node in that order under the rules; a running job keeps its
nodes while it stays among those placed, and one that is not is preempted.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from apportion.simulator.clients import Reply, Request
from apportion.simulator.state import JobStates
from apportion.solver.arraytypes import FloatArray, IntArray

Key = Callable[[JobStates, IntArray, Mapping[str, Any]], FloatArray]

DEFAULT_THRESHOLDS = (3600.0, 36000.0)


def _fifo(table: JobStates, jobs: IntArray, _: Mapping[str, Any]) -> FloatArray:
    return table.arrival[jobs]


def _srtf(table: JobStates, jobs: IntArray, _: Mapping[str, Any]) -> FloatArray:
    fastest = table.thr[jobs].max(axis=1)
    left: FloatArray = table.remaining[jobs] / np.maximum(fastest, 1e-300)
    return left


def _las(table: JobStates, jobs: IntArray, _: Mapping[str, Any]) -> FloatArray:
    return table.run_seconds[jobs]


def _two_d_las(table: JobStates, jobs: IntArray, options: Mapping[str, Any]) -> FloatArray:
    """Queue index (by GPU-seconds attained) dominates; within a queue, FIFO by first start
    (a job not started yet comes after those that have, by arrival)."""
    limits = np.asarray(options.get("thresholds", DEFAULT_THRESHOLDS), dtype=float)
    queue = np.searchsorted(limits, table.gpu_seconds[jobs], side="right")
    started = np.where(np.isnan(table.first_start[jobs]), np.inf, table.first_start[jobs])
    # Rank started times within the job set so the queue index can dominate one float key.
    order = np.lexsort((table.arrival[jobs], started))
    rank = np.empty(jobs.size)
    rank[order] = np.arange(jobs.size)
    key: FloatArray = queue * (jobs.size + 1.0) + rank
    return key


def _next_demotion(
    table: JobStates, allocation: Mapping[str, Any], options: Mapping[str, Any]
) -> float | None:
    """Seconds until a job that runs reaches its queue's limit (event-driven runs decide again
    then, as Tiresias's simulator does)."""
    jobs = np.array([table.index[i] for i in allocation], dtype=np.int64)
    limits = np.asarray(options.get("thresholds", DEFAULT_THRESHOLDS), dtype=float)
    attained = table.gpu_seconds[jobs]
    queue = np.searchsorted(limits, attained, side="right")
    below = queue < limits.size
    left = (limits[queue[below]] - attained[below]) / table.scale[jobs[below]]
    return float(left.min()) if left.size else None


def _edf(table: JobStates, jobs: IntArray, _: Mapping[str, Any]) -> FloatArray:
    first = [job.deadlines[0].time if job.deadlines else np.inf for job in table.trace.jobs]
    return np.asarray(first, dtype=float)[jobs]


KEYS: dict[str, tuple[Key, bool]] = {
    "fifo_baseline": (_fifo, False),
    "srtf": (_srtf, True),
    "las": (_las, True),
    "2d_las": (_two_d_las, True),
    "edf": (_edf, True),
}
ALIASES = {"tiresias": "2d_las", "2d-las": "2d_las", "fifo_greedy": "fifo_baseline"}


class Baseline:
    """A priority scheduler with greedy, type-aware gang placement."""

    baseline = True

    def __init__(self, name: str, options: Mapping[str, Any]) -> None:
        self.name = ALIASES.get(name, name)
        if self.name not in KEYS:
            raise ValueError(f"unknown baseline {name!r}; choose one of {', '.join(KEYS)}")
        self._key, preemptive = KEYS[self.name]
        self.options = dict(options)
        self.preemptive = bool(self.options.get("preemptive", preemptive))

    def decide(self, request: Request) -> Reply:
        started = time.perf_counter()
        table, jobs = request.table, request.jobs
        key = self._key(table, jobs, self.options)
        if self.preemptive:
            order = jobs[np.lexsort((table.arrival[jobs], key))]
        else:  # running jobs keep their GPUs: they rank first
            idle = table.cur_type[jobs] < 0
            order = jobs[np.lexsort((table.arrival[jobs], key, idle))]
        ids = table.ids
        answer = Reply(
            status="optimal",
            allocation=greedy(table, order, request.free),
            order=[ids[j] for j in order.tolist()],
        )
        if self.name == "2d_las":
            answer.revisit_after = _next_demotion(table, answer.allocation, self.options)
        answer.seconds = answer.solver_seconds = time.perf_counter() - started
        return answer

    def close(self) -> None:
        return None


def greedy(
    table: JobStates, order: IntArray, free: IntArray | None = None
) -> dict[str, dict[str, float]]:
    """Gang placement in priority order on `free` GPUs per type (default: the whole cluster):
    the fastest type with room for the job's gang (its current type among equally fast ones, so
    a tie never moves it); stops once no later job's gang fits anywhere."""
    free = (table.capacity if free is None else free).copy()
    thr = table.thr[order]
    scale = table.scale[order]
    current = table.cur_type[order]
    # The smallest gang among this job and every later one: past it nothing can fit.
    smallest_after = np.minimum.accumulate(scale[::-1])[::-1]
    allocation: dict[str, dict[str, float]] = {}
    for row in range(order.size):
        if free.max() < smallest_after[row]:
            break
        room = (free >= scale[row]) & (thr[row] > 0)
        if not room.any():
            continue
        speed = np.where(room, thr[row], -1.0)
        k = int(np.argmax(speed))
        c = int(current[row])
        if c >= 0 and room[c] and speed[c] >= speed[k]:
            k = c
        free[k] -= scale[row]
        allocation[table.ids[order[row]]] = {table.types[k]: 1.0}
    return allocation
