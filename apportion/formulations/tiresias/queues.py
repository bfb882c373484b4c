"""Discretized 2D attained service (Tiresias §3.2): queues, starvation promotion, the order
inside a queue, and when the answer goes stale.

K queues split at limits θ_1 < … < θ_{K−1} in GPU-seconds: a job with attained service a_J =
W_J t_J is in queue i (0-based) when θ_i ≤ a_J < θ_{i+1} (θ_0 = 0, θ_K = ∞). A waiting job below
the top queue that has run (a_J > 0) and has waited δ_J ≥ PROMOTEKNOB × t_J goes back to the top
queue with a_J and δ_J reset (t_J = a_J / W_J): the answer says `promoted`, and the caller resets
its counts. Inside a queue 2D-Gittins serves by index, highest first; jobs of equal priority
(every job of a 2D-LAS queue) in the queue's order, as Tiresias's simulator keeps it: a job
joins the back of its queue on arrival, demotion or promotion, and after each decision the
jobs that run move ahead of those that wait, each group keeping its order (so a running job is
not stopped for an equal that waits, and a job just stopped goes first among those waiting).
The caller keeps that order (`queue_order`); a job promoted by this answer joins the back of
the top queue. Without it, running jobs come first, then jobs by first start (jobs that never
ran after), then by arrival.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from apportion.solver.arraytypes import BoolArray, FloatArray, IntArray


@dataclass(frozen=True)
class Queues:
    """Each job's queue (after promotion), its place within the queue, and its priority."""

    queue: IntArray  # 0 = the top queue
    promoted: BoolArray
    attained: FloatArray  # a_J for this decision (0 for a promoted job)
    rank: IntArray  # 0 = first within its queue
    priority: FloatArray  # LAS: −a_J; Gittins: the index

    @property
    def count(self) -> int:
        return int(self.queue.max(initial=-1)) + 1


def queue_of(attained: FloatArray, limits: FloatArray) -> IntArray:
    """The queue of each attained service: how many limits it has reached."""
    return np.searchsorted(limits, attained, side="right").astype(np.int64)


def promote(
    queue: IntArray,
    attained: FloatArray,
    pending: FloatArray,
    gang: FloatArray,
    waiting: BoolArray,
    knob: float | None,
) -> BoolArray:
    """Waiting jobs below the top queue that have run and waited PROMOTEKNOB × their run time."""
    if knob is None:
        return np.zeros(queue.size, dtype=bool)
    ran = attained / gang
    return waiting & (queue > 0) & (attained > 0) & (pending >= knob * ran)


def serving_order(
    queue: IntArray,
    priority: FloatArray,
    started: FloatArray,
    arrival: FloatArray,
    running: BoolArray | None = None,
    placed: FloatArray | None = None,
) -> IntArray:
    """Job indices in serving order: queue, then priority (higher first), then the queue's
    order (`placed`, missing last), then running jobs before waiting ones, then first start
    (never started last), then arrival, then snapshot order."""
    n = queue.size
    start = np.where(np.isnan(started), np.inf, started)
    come = np.where(np.isnan(arrival), np.inf, arrival)
    waits = np.zeros(n) if running is None else (~running).astype(float)
    place = np.zeros(n) if placed is None else np.where(np.isnan(placed), np.inf, placed)
    index = np.arange(n)
    return np.lexsort((index, come, start, waits, place, -priority, queue)).astype(np.int64)


def ranks(queue: IntArray, order: IntArray) -> IntArray:
    """Each job's position within its own queue, given the serving order."""
    rank = np.empty(queue.size, dtype=np.int64)
    q = queue[order]
    first = np.searchsorted(q, q, side="left")  # where each job's queue starts in the order
    rank[order] = np.arange(order.size) - first
    return rank


def revisit_after(
    queues: Queues,
    runs: BoolArray,
    gang: FloatArray,
    pending: FloatArray,
    limits: FloatArray,
    knob: float | None,
) -> float | None:
    """Seconds until the decision goes stale with no job arriving or finishing: the first job
    that runs to its queue's limit (a demotion), or the first waiting job to reach its
    promotion; None if neither happens."""
    q, a = queues.queue, queues.attained
    below = runs & (q < limits.size)
    demote = (limits[np.minimum(q[below], limits.size - 1)] - a[below]) / gang[below]
    times = [demote]
    if knob is not None:
        eligible = ~runs & (q > 0) & (a > 0)
        wait = knob * a[eligible] / gang[eligible] - pending[eligible]
        times.append(wait[wait > 0])
    found = np.concatenate(times)
    return float(found.min()) if found.size else None
