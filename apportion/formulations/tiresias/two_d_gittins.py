"""Discretized 2D-Gittins index (Tiresias, NSDI'19 §3.2; FORMULATIONS §10): priorities from
attained service and the distribution of past jobs' GPU-times (`service_distribution`).

Queues and promotion as 2D-LAS; within a queue, jobs are served by their Gittins index,
highest first (`gittins_index`):

    G_J = sup_Δ P(S − a_J ≤ Δ | S > a_J) / E[min(S − a_J, Δ) | S > a_J],   a_J = W_J t_J,

with the service quantum Δ discretized to the rest of the job's queue, Δ_i = θ_{i+1} − a_J (∞
in the last queue), as the paper does (`quantum = "queue"`), or the supremum over every Δ
(`quantum = "sup"`). Admission and placement as 2D-LAS.
"""

from __future__ import annotations

import numpy as np

from apportion.formulations.tiresias.gittins_index import Distribution
from apportion.formulations.tiresias.options import GittinsOptions
from apportion.formulations.tiresias.run import run_tiresias
from apportion.solver.arrays import ClusterArrays
from apportion.solver.arraytypes import FloatArray, IntArray
from apportion.solver.backends import Feature
from apportion.solver.context import SolveContext
from apportion.solver.errors import InputError
from apportion.solver.policy import Outcome, Policy, PolicyDefaults
from apportion.solver.snapshot import Snapshot


def run(
    snapshot: Snapshot, problem: ClusterArrays, options: GittinsOptions, ctx: SolveContext
) -> Outcome:
    if snapshot.service_distribution is None:
        raise InputError.single(
            ("snapshot", "service_distribution"),
            "required by the tiresias_gittins policy: past jobs' GPU-times (samples or a "
            "histogram)",
            "missing",
        )
    dist = Distribution.from_snapshot(snapshot.service_distribution)
    limits = np.asarray(options.thresholds, dtype=float)

    def gittins(attained: FloatArray, queue: IntArray) -> tuple[FloatArray, FloatArray]:
        if options.quantum == "sup":
            index = dist.supremum(attained)
        else:
            top = np.append(limits, np.inf)[queue]
            index = dist.index(attained, top - attained)
        return index, index

    return run_tiresias(snapshot, problem, options, ctx, gittins)


POLICY = Policy(
    name="tiresias_gittins",
    summary="Tiresias's discretized 2D-Gittins index: K queues by attained GPU-seconds, the "
    "Gittins index from past jobs' GPU-times within a queue, exact gang admission.",
    options=GittinsOptions,
    run=run,
    problem_class="MILP",
    needs=frozenset({Feature.MILP}),
    defaults=PolicyDefaults(time_limit=10.0, mip_gap=0.0),
)
