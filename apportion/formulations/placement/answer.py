"""What the search hands the policy, and the checks every placement passes before it is
believed: feasibility, independent of any model, and the gap to a bound."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from apportion.formulations.placement.instance import Instance, Started
from apportion.solver.status import Status


@dataclass
class Answer:
    status: Status
    started: Started = field(default_factory=dict)
    solver_objective: float | None = None
    gap: float | None = None
    problems: list[str] = field(default_factory=list)
    lazy_rounds: int = 0
    bound: float | None = None  # a valid upper bound on the objective, when one is known
    value: float | None = None  # the evaluated objective of `started`, when it was computed


def relative_gap(bound: float, value: float) -> float:
    return max(bound - value, 0.0) / max(abs(value), 1e-9)


def check_feasible(inst: Instance, started: Started) -> list[str]:
    """Independent of the model: shapes respected and no node over its free GPUs."""
    problems = []
    load = np.zeros(len(inst.node_ids), dtype=np.int64)
    opts = inst.options
    for j, (o, nodes) in started.items():
        if len(set(nodes)) != opts.nodes[o]:
            problems.append(f"{inst.job_ids[j]} uses {len(nodes)} nodes, its shape {opts.nodes[o]}")
        load[nodes] += opts.per_node[o]
    for n in np.flatnonzero(load > inst.free).tolist():
        problems.append(f"node {inst.node_ids[n]} over its free GPUs")
    return problems
