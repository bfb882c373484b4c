"""The starting schedule: running jobs where they run, then candidates level by level, each
time the start (candidate, shape, nodes) that adds the most to the objective per GPU, while one
adds anything (under the flat price a higher level's jobs always add: their GPUs outweigh any
contention; under the progress price a start that takes more from its neighbours, at their
priorities, than it makes does not).

A start is scored exactly, from the definition (`evaluate`): its own loss is its worst
co-runner's, and each job on its nodes loses the larger of what it lost and what the newcomer
takes from it, each loss at its price (`price`). Nodes: the one where the newcomer suffers and
causes least for a one-node shape (that is its exact cost), every set of k eligible nodes when
there are few (`ENUMERATE`), else the k nodes where it suffers and causes least (each node's
harm kept per configuration, and worked out again only where a start changed it).

Under a time limit the greedy stops adding starts once the budget is spent: what it has is a
schedule (running jobs where they run, the starts so far), answered as the fallback.
"""

from __future__ import annotations

from itertools import combinations, islice

import numpy as np

from apportion.formulations.placement.schedule.evaluate import Decision
from apportion.formulations.placement.schedule.instance import ScheduleInstance
from apportion.formulations.placement.schedule.price import loss_units
from apportion.solver.arraytypes import FloatArray
from apportion.solver.context import TimeBudget

ENUMERATE = 64  # node sets tried exhaustively per shape, at most


class _State:
    """Who holds what, and what each running job loses, as the greedy builds the schedule."""

    def __init__(self, inst: ScheduleInstance, w1: float) -> None:
        self.inst = inst
        # A loss costs factor · units (`price`); ranking nodes by units alone still prefers
        # the least contended ones where W1 = 0 prices nothing.
        self.factor, self.choice_units = loss_units(inst, w1)
        self.units = np.zeros(inst.size)  # per position: its choice's units
        self.free = inst.node_gpus.copy()
        self.on: list[list[int]] = [[] for _ in inst.node_ids]  # positions per node
        self.config = np.full(inst.size, -1, dtype=np.int64)
        self.loss = np.zeros(inst.size)
        self.decision: Decision = {}
        configs, n_nodes = inst.loss.shape[0], len(inst.node_ids)
        # Per (configuration, node): what a newcomer of that configuration suffers and causes
        # there, on its own; stale columns are worked out again when asked for.
        self._suffer = np.zeros((configs, n_nodes))
        self._damage = np.zeros((configs, n_nodes))
        self._stale = np.ones(n_nodes, dtype=bool)
        self._nodes_of: dict[int, list[int]] = {}

    def place(self, position: int, choice: int, nodes: list[int], gpus: list[int]) -> None:
        alpha = int(self.inst.choices.config[choice])
        new_loss = self.suffered(alpha, nodes)
        self._stale[nodes] = True
        for b in self.neighbours(nodes):
            self.loss[b] = max(self.loss[b], self.inst.loss[self.config[b], alpha])
            self._stale[self._nodes_of[b]] = True  # b's loss enters the damage where it runs
        self._nodes_of[position] = list(nodes)
        for n, g in zip(nodes, gpus, strict=True):
            self.free[n] -= g
            self.on[n].append(position)
        self.config[position] = alpha
        self.units[position] = self.choice_units[choice]
        self.loss[position] = new_loss
        self.decision[position] = (choice, list(nodes))

    def neighbours(self, nodes: list[int]) -> set[int]:
        return {b for n in nodes for b in self.on[n]}

    def suffered(self, alpha: int, nodes: list[int]) -> float:
        others = self.neighbours(nodes)
        if not others:
            return 0.0
        return max(0.0, float(self.inst.loss[alpha, self.config[list(others)]].max()))

    def damage(self, alpha: int, nodes: list[int]) -> float:
        """Σ u ΔLoss over the jobs already on `nodes`, in units of the price."""
        others = list(self.neighbours(nodes))
        if not others:
            return 0.0
        after = np.maximum(self.loss[others], self.inst.loss[self.config[others], alpha])
        return float((self.units[others] * (after - self.loss[others])).sum())

    def harm(self, alpha: int, per_node: float, nodes: list[int]) -> FloatArray:
        """Per node of `nodes`: suffered · `per_node` (the newcomer's units per node) + damage,
        were a piece of configuration α alone there."""
        for n in np.flatnonzero(self._stale).tolist():
            others = self.on[n]
            if others:
                theirs = self.config[others]
                self._suffer[:, n] = np.maximum(self.inst.loss[:, theirs].max(axis=1), 0.0)
                before = self.loss[others][:, None]
                after = np.maximum(before, self.inst.loss[theirs, :])
                self._damage[:, n] = self.units[others] @ (after - before)
            else:
                self._suffer[:, n] = 0.0
                self._damage[:, n] = 0.0
        self._stale[:] = False
        out: FloatArray = self._suffer[alpha, nodes] * per_node + self._damage[alpha, nodes]
        return out


def greedy_start(
    inst: ScheduleInstance, w1: float, budget: TimeBudget | None = None
) -> tuple[Decision, bool]:
    """The greedy schedule, and whether the time limit cut it short."""
    ch, state = inst.choices, _State(inst, w1)
    for o in np.flatnonzero(ch.stay).tolist():
        position = int(ch.job[o])
        nodes, gpus = inst.held[position]
        state.place(position, o, nodes.tolist(), gpus.tolist())
    waiting = np.flatnonzero(~inst.running)
    for level in np.unique(inst.level[waiting]).tolist():
        members = waiting[inst.level[waiting] == level].tolist()
        while members:
            if budget is not None and budget.spent():
                return state.decision, True
            if budget is not None:
                budget.step(len(members))
            best = _best_start(inst, state, members, w1)
            if best is None:
                break
            position, choice, chosen = best
            state.place(position, choice, chosen, [int(ch.per_node[choice])] * len(chosen))
            members.remove(position)
    return state.decision, False


def _best_start(
    inst: ScheduleInstance, state: _State, members: list[int], w1: float
) -> tuple[int, int, list[int]] | None:
    """The candidate, choice and nodes adding the most per GPU, or None when none adds."""
    ch, w2 = inst.choices, 1.0 - w1
    best: tuple[float, int, int, list[int]] | None = None
    seen: set[int] = set()
    for position in members:
        if int(inst.group[position]) in seen:  # identical to one already tried
            continue
        seen.add(int(inst.group[position]))
        g = float(inst.demand[position])
        for o in np.flatnonzero((ch.job == position) & ~ch.stay).tolist():
            alpha = int(ch.config[o])
            value = w2 * float(inst.weight[position]) * g * float(ch.speed[o])
            units = float(state.choice_units[o])
            for nodes in _node_sets(inst, state, o):
                suffered = state.suffered(alpha, nodes)
                cost = state.factor * (units * suffered + state.damage(alpha, nodes))
                gain = (value - cost) / g
                if gain > 0 and (best is None or gain > best[0]):
                    best = (gain, position, o, nodes)
    return None if best is None else best[1:]


def _node_sets(inst: ScheduleInstance, state: _State, o: int) -> list[list[int]]:
    ch = inst.choices
    k, p = int(ch.nodes[o]), int(ch.per_node[o])
    room = np.flatnonzero((inst.node_type == ch.gpu_type[o]) & (state.free >= p)).tolist()
    if len(room) < k:
        return []
    if k == 1:  # one node: its harm is the start's exact cost, the least is the best
        harm = state.harm(int(ch.config[o]), float(state.choice_units[o]), room)
        return [[room[int(np.argmin(harm))]]]
    sets = list(islice(combinations(room, k), ENUMERATE + 1))
    if len(sets) <= ENUMERATE:
        return [list(s) for s in sets]
    harm = state.harm(int(ch.config[o]), float(state.choice_units[o]) / k, room)
    order = np.argsort(harm, kind="stable")[:k]
    return [sorted(room[i] for i in order.tolist())]
