"""A fast feasible placement: greedy starts, then one pass of removals and re-insertions.

Used as the MILP's starting incumbent (the solver then only has to improve and prove it) and as
the answer when a time limit leaves the solver without one (status `fallback`); once a time
limit is spent it stops where it is, with a placement all the same. Every move is
scored exactly: a job's CS depends only on its set of co-runners, so adding or removing one job
changes the objective by a term computed from that job's co-runners alone.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

import numpy as np

from apportion.formulations.placement.instance import Instance, Started
from apportion.solver.context import TimeBudget


@dataclass
class _State:
    inst: Instance
    penalty: str
    residual: np.ndarray
    config: dict[int, int] = field(default_factory=dict)  # placed job → config
    nodes: dict[int, list[int]] = field(default_factory=dict)  # placed job → nodes
    on_node: list[set[int]] = field(default_factory=list)
    cs: dict[int, float] = field(default_factory=dict)
    # add_cost of a job alone on one node, per (configuration, node); stale nodes (whose jobs
    # or their CS changed) are worked out again when asked for.
    _single: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    _stale: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))

    @classmethod
    def running(cls, inst: Instance, penalty: str) -> _State:
        state = cls(inst, penalty, inst.free.copy(), on_node=[set() for _ in inst.node_ids])
        state._single = np.zeros((inst.cs.shape[0], len(inst.node_ids)))
        state._stale = np.ones(len(inst.node_ids), dtype=bool)
        for r, j in enumerate(inst.running.tolist()):
            state._put(j, int(inst.running_config[r]), inst.running_nodes[r].tolist())
        for j in state.config:
            state.cs[j] = state._own(j, state.config[j], state._co_runners(j, state.nodes[j]))
        return state

    def _put(self, j: int, alpha: int, nodes: list[int]) -> None:
        self.config[j], self.nodes[j] = alpha, nodes
        for n in nodes:
            self.on_node[n].add(j)

    def _co_runners(self, j: int, nodes: list[int]) -> set[int]:
        return {b for n in nodes for b in self.on_node[n]} - {j}

    def _own(self, j: int, alpha: int, others: set[int]) -> float:
        values = [self.inst.cs[alpha, self.config[b]] for b in others]
        if self.penalty == "additive":
            return float(1.0 + sum(v - 1.0 for v in values))
        return float(max([1.0, *values]))

    def _raised(self, b: int, alpha: int) -> float:
        """b's CS once a job of config alpha joins its co-runners."""
        value = self.inst.cs[self.config[b], alpha]
        if self.penalty == "additive":
            return float(self.cs[b] + value - 1.0)
        return float(max(self.cs[b], value))

    def add_cost(self, j: int, alpha: int, nodes: list[int]) -> float:
        """Increase of Σ CS if job j (config alpha) starts on `nodes`."""
        others = self._co_runners(j, nodes)
        own = self._own(j, alpha, others)
        return own - 1.0 + sum(self._raised(b, alpha) - self.cs[b] for b in others)

    def single_costs(self, alpha: int, nodes: np.ndarray) -> np.ndarray:
        """add_cost(j, alpha, [n]) for each of `nodes`, for a job j that is not placed."""
        for n in np.flatnonzero(self._stale).tolist():
            others = list(self.on_node[n])
            column = np.zeros(self._single.shape[0])
            if others:
                theirs = np.array([self.config[b] for b in others])
                held = np.array([self.cs[b] for b in others])
                suffered, caused = self.inst.cs[:, theirs], self.inst.cs[theirs, :].T
                if self.penalty == "additive":
                    column = (suffered - 1.0).sum(axis=1) + (caused - 1.0).sum(axis=1)
                else:
                    own = np.maximum(suffered.max(axis=1), 1.0) - 1.0
                    column = own + (np.maximum(caused, held) - held).sum(axis=1)
            self._single[:, n] = column
        self._stale[:] = False
        out: np.ndarray = self._single[alpha, nodes]
        return out

    def _touch(self, nodes: list[int]) -> None:
        """The single costs on `nodes` and wherever a job on them runs are stale."""
        self._stale[nodes] = True
        for b in {b for n in nodes for b in self.on_node[n]}:
            self._stale[self.nodes[b]] = True

    def add(self, j: int, o: int, nodes: list[int]) -> None:
        alpha = int(self.inst.options.config[o])
        others = self._co_runners(j, nodes)
        self._touch(nodes)
        for b in others:
            self.cs[b] = self._raised(b, alpha)
        self._put(j, alpha, nodes)
        self.cs[j] = self._own(j, alpha, others)
        self.residual[nodes] -= self.inst.options.per_node[o]

    def remove(self, j: int, o: int) -> None:
        self._touch(self.nodes[j])
        nodes = self.nodes.pop(j)
        self.config.pop(j)
        self.cs.pop(j)
        for n in nodes:
            self.on_node[n].discard(j)
        self.residual[nodes] += self.inst.options.per_node[o]
        for b in {b for n in nodes for b in self.on_node[n]}:
            self.cs[b] = self._own(b, self.config[b], self._co_runners(b, self.nodes[b]))


def _best_move(
    state: _State, position: int, gain: float, weight: float
) -> tuple[float, int, list[int]]:
    """The best (Δ objective, option, nodes) for candidate `position`; Δ = -inf if none fits."""
    inst = state.inst
    opts = inst.options
    j = int(inst.candidates[position])
    best: tuple[float, int, list[int]] = (-np.inf, -1, [])
    for o in inst.options_of(position).tolist():
        k, p, alpha = int(opts.nodes[o]), int(opts.per_node[o]), int(opts.config[o])
        fits = np.flatnonzero((inst.node_type == opts.gpu_type[o]) & (state.residual >= p))
        if fits.size < k:
            continue
        # Rank nodes by the cost of this job alone on each, then by tightest fit (less
        # fragmentation); take the k cheapest and score that set exactly.
        single = state.single_costs(alpha, fits)
        order = np.lexsort((state.residual[fits], np.round(single, 12)))
        nodes = fits[order[:k]].tolist()
        delta = gain * inst.demand[position] - weight * state.add_cost(j, alpha, nodes)
        if delta > best[0]:
            best = (delta, o, nodes)
    return best


def greedy(
    inst: Instance, w1: float, penalty: str, passes: int = 3, budget: TimeBudget | None = None
) -> Started:
    """Best-first starts, then single-job moves until none helps.

    Best-first: repeatedly start the candidate whose best move gains the most per GPU (ties: the
    larger job, bin-packing's "decreasing"). Starts only make other moves costlier (fewer free
    GPUs, more co-runners), so a stale gain is an upper bound and a lazy heap is exact for this
    rule. Moves: take a started job out and put it back at its best place, or leave it waiting.
    """
    gain = (1.0 - w1) / inst.total_gpus
    weight = w1 / inst.num_jobs
    state = _State.running(inst, penalty)
    started: Started = {}
    heap = []
    for position in range(inst.candidates.size):
        delta, o, _ = _best_move(state, position, gain, weight)
        if o >= 0 and delta > 0:
            heap.append((-delta / inst.demand[position], -inst.demand[position], position))
    heapq.heapify(heap)
    while heap and not (budget is not None and budget.spent()):
        _, _, position = heapq.heappop(heap)
        if budget is not None:
            budget.step()
        delta, o, nodes = _best_move(state, position, gain, weight)
        if o < 0 or delta <= 0:
            continue
        key = (-delta / inst.demand[position], -inst.demand[position], position)
        if heap and key > heap[0]:
            heapq.heappush(heap, key)  # stale: someone else is better now
            continue
        j = int(inst.candidates[position])
        state.add(j, o, nodes)
        started[j] = (o, nodes)
    for _ in range(passes):
        if not _improve(state, started, gain, weight, budget):
            break
    return started


def improve(
    inst: Instance,
    started: Started,
    w1: float,
    penalty: str,
    passes: int = 3,
    budget: TimeBudget | None = None,
) -> Started:
    """`started` after single-job moves (as in `greedy`) until none helps."""
    state = _State.running(inst, penalty)
    out = dict(started)
    for j, (o, nodes) in out.items():
        state.add(j, o, nodes)
    gain = (1.0 - w1) / inst.total_gpus
    weight = w1 / inst.num_jobs
    for _ in range(passes):
        if not _improve(state, out, gain, weight, budget):
            break
    return out


def _improve(
    state: _State, started: Started, gain: float, weight: float, budget: TimeBudget | None
) -> bool:
    """One sweep of single-job moves; True if anything changed (and there is time for more)."""
    inst = state.inst
    improved = False
    for position in np.argsort(-inst.demand, kind="stable").tolist():
        if budget is not None and budget.spent():
            return False
        if budget is not None:
            budget.step()
        j = int(inst.candidates[position])
        o, keep = -1, 0.0
        nodes: list[int] = []
        if j in started:
            o, nodes = started.pop(j)
            state.remove(j, o)
            alpha = int(inst.options.config[o])
            keep = gain * inst.demand[position] - weight * state.add_cost(j, alpha, nodes)
        delta, best_o, best_nodes = _best_move(state, position, gain, weight)
        if best_o >= 0 and delta > max(keep, 0.0) + 1e-12:
            o, nodes, improved = best_o, best_nodes, True
        elif o >= 0 and keep <= 0:
            o, improved = -1, True
        if o >= 0:
            state.add(j, o, nodes)
            started[j] = (o, nodes)
    return improved


def single_starts(
    inst: Instance, started: Started, w1: float, penalty: str, positions: list[int]
) -> Started:
    """For each candidate position, the start `greedy` would pick for it next to `started`
    (option, nodes), whatever its gain; candidates that fit nowhere are left out. Keyed by job."""
    state = _State.running(inst, penalty)
    for j, (o, nodes) in started.items():
        state.add(j, o, nodes)
    gain = (1.0 - w1) / inst.total_gpus
    weight = w1 / inst.num_jobs
    out: Started = {}
    for position in positions:
        _, o, nodes = _best_move(state, position, gain, weight)
        if o >= 0:
            out[int(inst.candidates[position])] = (o, nodes)
    return out
