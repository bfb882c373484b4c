"""Network-load placement: the ILP of Tiresias's appendix, fast (FORMULATIONS §10c).

Each waiting job, in arrival order, is placed on the GPUs running jobs and the jobs placed
before it leave, minimizing the most loaded node's network traffic

    max_n  t_n + M w_n + W S_n − 2 w_n S_n

(t_n: the traffic already there; w_n the job's workers on node n, S_n the share of its model
its parameter servers there hold), then, with that held, maximizing the traffic kept inside
nodes (`tie_break`). Jobs need `tensor_sizes` to have traffic; a job without them, or on one
GPU, fills the smallest holes. A job whose gang does not fit the free GPUs waits. The
formulation and what makes it fast are in `traffic`; it is `optimal` when every job's ILP is.
"""

from __future__ import annotations

import numpy as np
from pydantic import Field

from apportion.formulations.tiresias.greedy import Decision
from apportion.formulations.tiresias.instance import build_instance
from apportion.formulations.tiresias.netplace import place_in_turn
from apportion.formulations.tiresias.queues import serving_order
from apportion.solver.arrays import ClusterArrays
from apportion.solver.backends import Feature
from apportion.solver.context import SolveContext
from apportion.solver.options import PolicyOptions
from apportion.solver.policy import Outcome, Policy, PolicyDefaults
from apportion.solver.snapshot import Snapshot
from apportion.solver.status import Status

NAME = "the most loaded node's network traffic (Tiresias's appendix ILP)"


class NetworkLoadOptions(PolicyOptions):
    tie_break: bool = Field(
        True,
        description="With the most loaded node's traffic at its optimum, keep the most traffic "
        "inside nodes (the appendix's other aim: the least total network traffic).",
    )


def run(
    snapshot: Snapshot, problem: ClusterArrays, options: NetworkLoadOptions, ctx: SolveContext
) -> Outcome:
    inst = build_instance(snapshot, pack_limit=1.0, preemption_cost=0.0)
    m = inst.num_jobs
    waiting = np.flatnonzero(~inst.running & inst.schedulable)
    arrival = np.array(
        [j.arrival_time if j.arrival_time is not None else np.nan for j in snapshot.jobs]
    )
    order = serving_order(np.zeros(m, np.int64), np.zeros(m), np.full(m, np.nan), arrival)
    jobs = [j for j in order.tolist() if j in set(waiting.tolist())]
    decision = Decision(inst.running.copy())
    network = place_in_turn(inst, decision, jobs, ctx, tie_break=options.tie_break)
    allocation = np.zeros((problem.num_jobs, problem.num_types))
    placements: dict[int, dict[str, int]] = {}
    for j in np.flatnonzero(inst.running).tolist():
        nodes, gpus = inst.holding(j)
        placements[j] = {inst.node_ids[n]: int(g) for n, g in zip(nodes, gpus, strict=True)}
        allocation[j, inst.node_type[nodes[0]]] = 1.0
    for j, (k, pieces) in decision.started.items():
        placements[j] = {inst.node_ids[n]: g for n, g in sorted(pieces.items())}
        allocation[j, k] = 1.0
    reasons = dict(inst.reasons)
    for j in jobs:
        if j not in decision.started:
            reasons[j] = f"waiting: too few free GPUs for its {inst.gang[j]}"
    state = np.full(m, "waiting", dtype=object)
    state[inst.running] = "running"
    state[list(decision.started)] = "started"
    peak = np.full(m, np.nan)
    inside = np.full(m, np.nan)
    for j, placed in network.placed.items():
        peak[j], inside[j] = placed.load, placed.inside
    # A placement short of its proof stopped at the time limit (each ILP gets what is left).
    spent = network.status is not Status.OPTIMAL and ctx.budget.spent()
    return Outcome(
        network.status,
        float(network.load.max(initial=0.0)),
        NAME,
        allocation,
        reasons,
        job_metrics={"state": state, "max_network_load": peak, "traffic_inside": inside},
        summary={
            "max_network_load_before": network.before,
            "max_network_load": float(network.load.max(initial=0.0)),
            "started": len(decision.started),
            "ilp_placements": len(network.placed),
            "ilp_solves": sum(p.solves for p in network.placed.values()),
        },
        placements=placements,
        mip_gap=network.gap,
        termination=ctx.budget.termination if spent else None,
    )


POLICY = Policy(
    name="network_load_placement",
    summary="Place waiting gangs minimizing the most loaded node's network traffic "
    "(Tiresias's appendix ILP), then keeping the most traffic inside nodes.",
    options=NetworkLoadOptions,
    run=run,
    problem_class="MILP",
    needs=frozenset({Feature.MILP}),
    defaults=PolicyDefaults(time_limit=10.0),
)
