"""What the search hands the policy, and the checks every placement passes before it is
believed: feasibility, independent of any model, and the gap to a bound."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from apportion.formulations.placement.instance import Instance, Started
from apportion.solver.backends import Solution
from apportion.solver.status import Status, Termination


@dataclass
class PlacementAnswer:
    """The best placement of waiting jobs the search found (linear and reference objectives),
    with its status, gap and the search's own account of why it stopped."""

    status: Status
    started: Started = field(default_factory=dict)
    solver_objective: float | None = None
    gap: float | None = None
    problems: list[str] = field(default_factory=list)
    lazy_rounds: int = 0
    bound: float | None = None  # a valid upper bound on the objective, when one is known
    value: float | None = None  # the evaluated objective of `started`, when it was computed
    solution: Solution | None = None  # the solve that ended the search, if one did
    termination: Termination | None = None  # why the search stopped, where the solve does not say


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
