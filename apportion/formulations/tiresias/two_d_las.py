"""Discretized 2D-LAS (Tiresias, NSDI'19 §3.2; FORMULATIONS §10): priorities from attained
service alone, no knowledge of job sizes.

A job's attained service a_J = W_J t_J (GPUs × seconds run) puts it in one of K queues split at
the `thresholds`; its priority is R_J = −a_J (Pseudocode 1), and a queue is served in its
order as Tiresias's simulator keeps it (`queue_order`: newcomers at the back, the jobs that run
ahead of those that wait, so no job is stopped for an equal; without it, running jobs first,
then by first start). Starved jobs go back to the top queue (`promote_knob`). Who runs is
then decided exactly (`admission`: the most jobs of each queue in turn, then the fewest
preemption-seconds, then priority; a MILP) or by Tiresias's greedy rule, and placed with
consolidation only where it pays (`placement`).
"""

from __future__ import annotations

import numpy as np

from apportion.formulations.tiresias.options import TiresiasOptions
from apportion.formulations.tiresias.run import run_tiresias
from apportion.solver.arrays import ClusterArrays
from apportion.solver.arraytypes import FloatArray, IntArray
from apportion.solver.backends import Feature
from apportion.solver.context import SolveContext
from apportion.solver.policy import Outcome, Policy, PolicyDefaults
from apportion.solver.snapshot import Snapshot


def _las(attained: FloatArray, queue: IntArray) -> tuple[FloatArray, FloatArray]:
    return np.zeros(attained.size), np.where(attained > 0, -attained, 0.0)


def run(
    snapshot: Snapshot, problem: ClusterArrays, options: TiresiasOptions, ctx: SolveContext
) -> Outcome:
    return run_tiresias(snapshot, problem, options, ctx, _las)


POLICY = Policy(
    name="tiresias_las",
    summary="Tiresias's discretized 2D-LAS: K queues by attained GPU-seconds, running jobs "
    "ahead within a queue, exact gang admission, consolidation only for skewed models.",
    options=TiresiasOptions,
    run=run,
    problem_class="MILP",
    needs=frozenset({Feature.MILP}),
    defaults=PolicyDefaults(time_limit=10.0, mip_gap=0.0),
)
