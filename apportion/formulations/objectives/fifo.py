"""Heterogeneity-aware FIFO (FORMULATIONS §5): a deterministic rule, no LP.

Jobs in arrival order (`arrival_time`, ties broken by id in string order) each take, among the GPU
types that still have at least s_j free GPUs and where the job can run, the type where it runs
fastest (ties: the snapshot's type order), for all of the time: X_jk = 1.

- `strict` (the default, the one mode in which no job overtakes an earlier one): the first job
  that fits nowhere stops the queue; every later job waits.
- `backfill`: that job waits, and later jobs that fit start anyway.
- `gavel`: Gavel's rule. The queue stops at the first job for which no type at all has s_j free
  GPUs; a job whose only types with room give it no throughput waits and the queue goes on
  (Gavel places it there, where it makes no progress and holds GPUs others could use: not
  copied).

Jobs that can never run (no positive throughput, or a gang wider than every usable type) and jobs
with no steps remaining are skipped with their reason; they never block the queue, since waiting
for them would stall it forever.

Guarantees, by construction: no type is over-subscribed (Σ_j s_j X_jk ≤ N_k), each job runs on at
most one type with X ∈ {0, 1}, and in strict mode the running jobs are exactly the placeable
prefix of the queue (no later job overtakes an earlier one). The status is `optimal` in the sense
that the allocation is exactly the rule's, with nothing approximated; the objective is the number
of jobs running.

The pass is vectorized (`place`): every job still in the queue is given its best type with room
as the free GPUs stand, and a running sum down the queue finds the first job whose type has
filled up before its turn. Everything before it is settled; the free GPUs are updated and the
pass resumes there. Free GPUs only fall, so each resumption closes a (type, scale factor) pair
for good and there are at most (types × distinct scale factors) of them; past a bound, and on
short queues, the rest is walked job by job.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from apportion.formulations.inputs import require_job_field
from apportion.solver.arrays import ClusterArrays
from apportion.solver.arraytypes import BoolArray, FloatArray, IntArray
from apportion.solver.context import SolveContext
from apportion.solver.options import PolicyOptions
from apportion.solver.policy import Outcome, Policy
from apportion.solver.snapshot import Snapshot
from apportion.solver.status import Status

NAME = "fifo"
Mode = Literal["strict", "backfill", "gavel"]

# What happened to each job of the queue.
PLACED, NO_ROOM, NO_GAIN, BEHIND = 0, 1, 2, 3
# The state of a walked job by its pick + 2 (a type, −1 for no room, −2 for no gain).
_WALKED = np.array([NO_GAIN, NO_ROOM, PLACED])
# Resumptions of the vectorized pass before the rest of the queue is walked job by job (only
# reached with very many distinct scale factors).
MAX_ROUNDS = 64
# Queues this short are walked job by job: a vectorized step costs about as much as walking a
# few dozen jobs (the `objectives` bench's FIFO rows).
SHORT_QUEUE = 48
# The head of every queue is walked job by job first: a contended queue usually stops within
# it (a few hundred jobs fill the cluster), and walking up to the stop is cheaper than
# vectorized steps over the whole queue (`bench.gavel_policies`); a longer queue goes on
# vectorized from there.
WALK_FIRST = 2048
# The head is walked in stretches of this many jobs, then twice as many, and so on: turning a
# job's rows into Python numbers costs about as much as walking it, and a contended queue
# usually stops within the first stretch.
FIRST_STRETCH = 128
# Up to this many ties of arrival times, each run of ties is sorted by id in Python; more are
# ranked all at once.
FEW_TIES = 64


class FifoOptions(PolicyOptions):
    mode: Mode = Field(
        "strict",
        description="strict: the first job that fits nowhere makes every later job wait; "
        "backfill: later jobs that fit start anyway; gavel: Gavel's rule, the queue stops only "
        "at a job for which no type has enough free GPUs (a job whose types with room give it "
        "no throughput waits and later jobs go on).",
    )


def queue_order(problem: ClusterArrays) -> IntArray:
    """Job indices by arrival time, ties by id."""
    order: IntArray = problem.arrival_time.argsort(kind="stable")
    arrival = problem.arrival_time[order]
    tied = np.flatnonzero(arrival[1:] == arrival[:-1])  # queue[i] ties with queue[i + 1]
    if not tied.size:
        return order  # no ties: the ids are never compared
    if tied.size > FEW_TIES:
        return _by_id(problem, order, arrival, tied)
    # A few runs of equal arrivals, each put in id order in Python, in place.
    ids = problem.job_ids
    for start, stop in _runs(tied.tolist()):
        order[start:stop] = sorted(order[start:stop].tolist(), key=ids.__getitem__)
    return order


def _runs(tied: list[int]) -> list[tuple[int, int]]:
    """The runs of equal arrivals, [start, stop) in the queue, from the positions that tie
    with the next."""
    runs: list[tuple[int, int]] = []
    for i in tied:
        if runs and runs[-1][1] == i + 1:
            runs[-1] = (runs[-1][0], i + 2)
        else:
            runs.append((i, i + 2))
    return runs


def _by_id(
    problem: ClusterArrays, order: IntArray, arrival: FloatArray, tied: IntArray
) -> IntArray:
    """`order` with its many ties put in id order, all at once."""
    equal = np.zeros(order.size, dtype=bool)
    equal[tied] = equal[tied + 1] = True
    at = np.flatnonzero(equal)
    # Only the tied jobs are reordered, by their ids (compared in Python: an array of strings
    # of every id is costly); a group of ties is a run of equal arrivals among them.
    jobs = order[at]
    ids = problem.job_ids
    names = [ids[j] for j in jobs.tolist()]
    rank = np.empty(len(names))
    rank[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(names))
    order[at] = jobs[np.lexsort((rank, arrival[at]))]
    return order


def run(
    snapshot: Snapshot, problem: ClusterArrays, options: FifoOptions, ctx: SolveContext
) -> Outcome:
    m = problem.num_jobs
    require_job_field(problem, problem.arrival_time, np.arange(m), "arrival_time", NAME)
    reasons = problem.unplaceable_reasons()
    finished = np.nonzero(problem.steps_remaining <= 0)[0].tolist()
    reasons.update(dict.fromkeys(finished, "no steps remaining"))
    order = queue = queue_order(problem)
    if reasons:
        skipped = np.zeros(m, bool)
        skipped[list(reasons)] = True
        queue = order[~skipped[order]]
    # The throughputs as they are, not masked by eligibility: the rule only takes a type with
    # s_j free GPUs (so never one with fewer than s_j) where the throughput is positive.
    choice, state, stop = place(
        problem.throughput[queue], problem.scale_factor[queue], problem.gpu_count, options.mode
    )
    running = choice >= 0
    placed = queue[running]
    allocation = np.zeros((m, problem.num_types))
    allocation[placed, choice[running]] = 1.0
    blocked_by = None if stop is None else int(queue[stop])
    _waiting(reasons, problem, queue, state, stop, options.mode)
    position = np.empty(m, dtype=np.int64)
    position[order] = np.arange(1, m + 1)
    flags = np.zeros(m, bool)
    flags[placed] = True
    started = placed.size
    return Outcome(
        Status.OPTIMAL,
        float(started),
        "jobs running",
        allocation,
        reasons,
        job_metrics={"queue_position": position, "running": flags},
        summary={
            "mode": options.mode,
            "running": started,
            "waiting": m - started,
            "blocked_by": None if blocked_by is None else problem.job_ids[blocked_by],
        },
    )


def place(
    speed: FloatArray, scale: FloatArray, capacity: FloatArray, mode: str
) -> tuple[IntArray, IntArray, int | None]:
    """The queue (rows in order; speed 0 where a job makes no progress; a type with fewer GPUs
    than a job's gang never has room for it) → (type per job or −1, what happened to each, the
    position of the job that stopped the queue)."""
    n = scale.size
    choice = np.full(n, -1, dtype=np.int64)
    state = np.full(n, NO_ROOM, dtype=np.int64)
    free = capacity.astype(float)
    pos, size, head = 0, FIRST_STRETCH, min(n, WALK_FIRST)
    while pos < head:  # stretches that double: a queue that stops early is read no further
        end = min(head, pos + size)
        stop = _walk(speed, scale, free, mode, pos, choice, state, end)
        if stop is not None:
            return choice, state, stop
        pos, size = end, 2 * size
    rounds = 0
    while pos < n:
        if rounds == MAX_ROUNDS or n - pos <= SHORT_QUEUE:
            stop = _walk(speed, scale, free, mode, pos, choice, state, n)
            return choice, state, stop
        rounds += 1
        end, event = _segment(speed[pos:], scale[pos:], free, mode, choice[pos:], state[pos:])
        pos += end
        if event == "stop":
            state[pos + 1 :] = BEHIND
            return choice, state, pos
    return choice, state, None


def _segment(
    speed: FloatArray,
    scale: FloatArray,
    free: FloatArray,
    mode: str,
    choice: IntArray,
    state: IntArray,
) -> tuple[int, str]:
    """One vectorized step from the head of `speed`: settle every job before the first event
    (a job whose best type filled up before its turn, or one that stops the queue), filling
    `choice` and `state` and lowering `free` in place. Returns (the event's position or the
    length, "refill" / "stop" / "end")."""
    room = free[None, :] >= scale[:, None]
    usable = room & (speed > 0)
    has: BoolArray = np.asarray(usable.any(axis=1), dtype=bool)
    pick = np.where(usable, speed, -1.0).argmax(axis=1)
    rows = np.flatnonzero(has)
    demand = np.zeros_like(speed)
    demand[rows, pick[rows]] = scale[rows]
    used = np.cumsum(demand, axis=0)
    taken = used[np.arange(scale.size), pick]
    refill: BoolArray = has & (taken > free[pick])
    if mode == "strict":
        stop = ~has
    elif mode == "gavel":
        # Free GPUs at each job's turn, valid up to the first refill (the only part used).
        stop = ~has & ~(free[None, :] - (used - demand) >= scale[:, None]).any(axis=1)
    else:
        stop = np.zeros_like(has)
    events = np.flatnonzero(refill | stop)
    end = int(events[0]) if events.size else scale.size
    settled = has[:end]
    choice[:end][settled] = pick[:end][settled]
    state[:end][settled] = PLACED
    if mode == "gavel":
        # Waiting with room somewhere, but only where the job makes no progress.
        state[:end][~settled & room[:end].any(axis=1)] = NO_GAIN
    if end:
        free -= used[end - 1]
    if not events.size:
        return end, "end"
    return end, "refill" if refill[end] else "stop"


def _walk(
    speed: FloatArray,
    scale: FloatArray,
    free: FloatArray,
    mode: str,
    pos: int,
    choice: IntArray,
    state: IntArray,
    end: int,
) -> int | None:
    """The same rule job by job from `pos` to `end`, on plain lists (linear; faster than
    array operations on a short queue or up to an early stop, and the way out for a queue
    that keeps closing new (type, scale factor) pairs), lowering `free` in place; the
    position of the job that stopped the queue, if one did."""
    left = free.tolist()
    types = range(len(left))
    block = speed[pos:end]
    rates = block.T.tolist()  # a list per type: a list per job would cost twice as much
    # Per job walked: the type it takes, or −1 (no type with room) or −2 (room only where it
    # makes no progress); written to the arrays at once.
    picks = block.argmax(axis=1).tolist()  # first its fastest type (of equals, the first)
    stop = None
    for j, (s, first) in enumerate(zip(scale[pos:end].tolist(), picks, strict=True)):
        if left[first] >= s and rates[first][j] > 0:
            left[first] -= s
            continue
        # The fastest type with room (the first of equals); rate 0 is no progress.
        best, top, fits = -1, 0.0, False
        for k in types:
            if left[k] >= s:
                fits = True
                if rates[k][j] > top:
                    best, top = k, rates[k][j]
        if best >= 0:
            left[best] -= s
        elif mode == "strict" or (mode == "gavel" and not fits):
            stop = pos + j
            del picks[j:]
            break
        elif mode == "gavel":
            best = -2
        picks[j] = best
    walked = np.array(picks, dtype=np.int64)
    done = slice(pos, pos + walked.size)
    choice[done] = np.maximum(walked, -1)
    state[done] = _WALKED[np.minimum(walked, 0) + 2]
    if stop is not None:
        state[stop + 1 :] = BEHIND
        return stop
    free[:] = left
    return None


_WAITING = {
    NO_ROOM: "waiting: no GPU type it can run on has {} free GPUs",
    NO_GAIN: "waiting: the GPU types with {} free GPUs give it no throughput",
}


def _waiting(
    out: dict[int, str],
    problem: ClusterArrays,
    queue: IntArray,
    state: IntArray,
    stop: int | None,
    mode: str,
) -> None:
    """Into `out`, the reason of every job of the queue that does not run: before the job that
    stopped the queue, one text per (kind, scale factor), shared (formatting one per job was
    most of the pass on long queues); that job's own; one text for every job behind it."""
    end = state.size if stop is None else stop
    waiting = np.nonzero(state[:end] != PLACED)[0]
    if waiting.size:
        jobs = queue[waiting]
        size = 1 << 32  # above any scale factor: one integer key per (kind, scale factor)
        keys = (state[waiting] * size + problem.scale_factor[jobs].astype(np.int64)).tolist()
        shared = {key: _WAITING[key // size].format(key % size) for key in set(keys)}
        out.update(zip(jobs.tolist(), map(shared.__getitem__, keys), strict=True))
    if stop is None:
        return
    blocker = int(queue[stop])
    s = int(problem.scale_factor[blocker])
    if mode == "gavel":
        out[blocker] = f"waiting: no GPU type has {s} free GPUs (the queue stops here)"
    else:
        out[blocker] = _WAITING[NO_ROOM].format(s)
    behind = f"waiting behind {problem.job_ids[blocker]!r} ({mode} FIFO)"
    out.update(dict.fromkeys(queue[stop + 1 :].tolist(), behind))


POLICY = Policy(
    name=NAME,
    summary="Heterogeneity-aware FIFO: in arrival order, each job takes the fastest type with "
    "enough free GPUs (strict, backfill or Gavel's rule); deterministic, no LP.",
    options=FifoOptions,
    run=run,
    problem_class="algorithm",
    needs=frozenset(),
)
