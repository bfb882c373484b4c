"""Score a schedule from its definition, independent of the model's variables (the policy
reports these numbers and checks the solver's objective against them).

A decision maps each job that runs (its position in the instance) to (choice, node indices).
For each, its co-runners are the other jobs holding GPUs on one of its nodes, its loss
ℓ_j = max(0, max over co-runners of Λ(α_j | α_b)), and

    objective = (1/C) [ W2 Σ_run π_j g_j σ_o − Σ_run c_o ℓ_j
                        − W2 Σ_{running, not staying} g_j (τ/H + ε) ]

with o the job's choice and c_o what a unit of its loss costs (`price`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from apportion.formulations.placement.schedule.instance import ScheduleInstance
from apportion.formulations.placement.schedule.model import STAY_BONUS
from apportion.formulations.placement.schedule.price import loss_units
from apportion.solver.arraytypes import FloatArray

Decision = dict[int, tuple[int, list[int]]]  # job position → (choice, node indices)


@dataclass
class Scored:
    placements: dict[int, dict[str, int]]  # snapshot job index → node id → GPUs
    loss: FloatArray  # per position, NaN for jobs that do not run
    worst: list[int | None]  # per position: the snapshot index of its worst co-runner
    objective: float
    gpus_used: int
    value_term: float
    contention_term: float
    restart_term: float
    moved: list[int]  # positions of running jobs that move
    stopped: list[int]  # ... that stop
    worst_source: list[str | None] = field(default_factory=list)  # per position: its worst CS's
    sources: Counter[str] = field(default_factory=Counter)  # every co-located pair's CS source


def held_by(inst: ScheduleInstance, decision: Decision) -> dict[int, dict[int, int]]:
    """Position → node index → GPUs, for every job the decision runs."""
    ch = inst.choices
    out: dict[int, dict[int, int]] = {}
    for position, (o, nodes) in decision.items():
        if ch.stay[o]:
            held_nodes, gpus = inst.held[position]
            out[position] = dict(zip(held_nodes.tolist(), gpus.tolist(), strict=True))
        else:
            out[position] = dict.fromkeys(nodes, int(ch.per_node[o]))
    return out


def score(inst: ScheduleInstance, decision: Decision, w1: float, restart: float) -> Scored:
    ch, total = inst.choices, float(inst.total_gpus)
    held = held_by(inst, decision)
    on_node: dict[int, list[int]] = {}
    for position, nodes in held.items():
        for n in nodes:
            on_node.setdefault(n, []).append(position)
    loss = np.full(inst.size, np.nan)
    worst: list[int | None] = [None] * inst.size
    worst_source: list[str | None] = [None] * inst.size
    sources: Counter[str] = Counter()
    for position, nodes in held.items():
        alpha = ch.config[decision[position][0]]
        others = {b for n in nodes for b in on_node[n]} - {position}
        betas = {b: ch.config[decision[b][0]] for b in others}
        values = {b: inst.loss[alpha, beta] for b, beta in betas.items()}
        sources.update(str(inst.source[alpha, beta]) for beta in betas.values())
        top = max(values, key=lambda b: (values[b], -b), default=None)
        loss[position] = max(0.0, values[top]) if top is not None else 0.0
        if top is not None and values[top] > 0:
            worst[position] = int(inst.index[top])
            worst_source[position] = str(inst.source[alpha, betas[top]])
    w2 = 1.0 - w1
    runs = np.array(sorted(decision), dtype=np.int64)
    chosen = np.array([decision[p][0] for p in runs.tolist()], dtype=np.int64)
    g = inst.demand.astype(float)
    value = w2 * float((inst.weight[runs] * g[runs] * ch.speed[chosen]).sum()) / total
    factor, units = loss_units(inst, w1)
    contention = factor * float((units[chosen] * loss[runs]).sum()) / total
    moved = [p for p in runs.tolist() if inst.running[p] and not ch.stay[decision[p][0]]]
    stopped = [p for p in np.flatnonzero(inst.running).tolist() if p not in decision]
    restart_term = w2 * float(g[moved + stopped].sum()) * (restart + STAY_BONUS) / total
    placements = {
        int(inst.index[p]): {inst.node_ids[n]: gpus for n, gpus in nodes.items()}
        for p, nodes in held.items()
    }
    return Scored(
        placements=placements,
        loss=loss,
        worst=worst,
        objective=value - contention - restart_term,
        gpus_used=int(sum(sum(n.values()) for n in held.values())),
        value_term=value,
        contention_term=contention,
        restart_term=restart_term,
        moved=moved,
        stopped=stopped,
        worst_source=worst_source,
        sources=sources,
    )
