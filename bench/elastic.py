"""Elastic jobs (issue 31): Sia's policy as the `sia` MILP on rounds of Sia's workloads.

Each row times many solves through the public `solve` and reports the p95 total (the target is
on it; the note adds the CPU seconds and the machine's load, as the wall clock of a shared
machine counts other work), every one proven to the policy's 0.01 % gap; the baseline solves
the same snapshots in the same process with HiGHS's presolve on (or, for the 5,120-job round,
without merging identical jobs), and the ratio is of the p95s.

- 64 GPUs: every round of a simulation of Saturn workload 1 on Sia's 6 × 4 T4, 2 × 8 A100,
  3 × 8 RTX 2080Ti (the snapshots the simulator hands the policy, 60 s rounds, first 4 hours);
- 2,048 GPUs, ~600 jobs: 600 jobs of Sia's 32× scale workload on the 32× cluster, each at a
  random epoch, replica limit and (for half) a running configuration with a restart history
  (`refdata.sia_snapshots.round_snapshot`; all distinct, so nothing merges), 10 seeds;
- 2,048 GPUs, 5,120 jobs at once: the whole scale workload on arrival, as Sia sees it then
  (no model yet: one GPU of any type, goodput 1), 10 repetitions.
"""

from __future__ import annotations

import os
import time
from functools import cache
from typing import Any

import numpy as np

from apportion.refdata import sia
from apportion.refdata.sia_snapshots import round_snapshot
from apportion.solver import solve
from bench.harness import Case, Row

GROUP = "elastic"
POLICY = "sia"
GAP = 1e-4


@cache
def _simulated_rounds() -> tuple[dict[str, Any], ...]:
    from apportion.simulator.elastic.engine import ElasticConfig, simulate_elastic
    from apportion.simulator.elastic.policies import ApportionElastic

    class Recording(ApportionElastic):
        def __init__(self) -> None:
            super().__init__(POLICY, sia.SIA_CLUSTER)
            self.snapshots: list[dict[str, Any]] = []

        def decide(self, now: float, active: list[Any]) -> Any:
            from apportion.simulator.elastic.belief import job_document, offer

            offers = {job.name: offer(job, self.shapes, self.cluster) for job in active}
            self.snapshots.append(
                {
                    "gpu_types": self.gpu_types,
                    "jobs": [job_document(job, now, offers[job.name]) for job in active],
                }
            )
            return super().decide(now, active)

    decider = Recording()
    simulate_elastic(
        sia.workload("saturn", 1), sia.SIA_CLUSTER, decider, ElasticConfig(max_time=4 * 3600)
    )
    return tuple(decider.snapshots)


def _scale_rounds() -> list[dict[str, Any]]:
    jobs = sia.scale_workload(32)
    cluster = sia.SIA_CLUSTER.scaled(32)
    return [round_snapshot(jobs[:600], cluster, seed=s) for s in range(10)]


def _fresh_rounds() -> list[dict[str, Any]]:
    snapshot = round_snapshot(sia.scale_workload(32), sia.SIA_CLUSTER.scaled(32), fresh=True)
    return [snapshot] * 10


def _timed(
    snapshots: list[dict[str, Any]], options: dict[str, Any]
) -> tuple[list[Any], float, list[float]]:
    """The results, the p95 of their total seconds, and each solve's CPU seconds (on a shared
    machine the wall clock counts the other work too)."""
    results, cpu = [], []
    for s in snapshots:
        started = time.process_time()
        results.append(solve(s, policy=POLICY, options=options))
        cpu.append(time.process_time() - started)
    return results, float(np.quantile([r.solver.total_seconds for r in results], 0.95)), cpu


def _runner(make: Any, baseline: dict[str, Any]) -> Any:
    def run(case: Case) -> Row:
        snapshots = list(make())
        results, p95, cpu = _timed(snapshots, case.options)
        _, base, _ = _timed(snapshots, baseline)
        totals = [r.solver.total_seconds for r in results]
        proven = all(
            r.status.value == "optimal" and (r.solver.mip_gap or 0.0) <= GAP for r in results
        )
        last = results[-1].solver
        note = (
            f"p95 of {len(results)} solves (p50 {np.median(totals):.3f}, max {max(totals):.3f}); "
            f"{'all' if proven else 'NOT all'} optimal within 0.01 %; "
            f"{max(len(s['jobs']) for s in snapshots):,} jobs at most, "
            f"{last.merged_groups} classes in the last; CPU p50 {np.median(cpu):.3f}, "
            f"p95 {np.quantile(cpu, 0.95):.3f} (load {os.getloadavg()[0]:.1f})"
        )
        return Row(
            case=case,
            jobs=len(snapshots[-1]["jobs"]),
            types=len(snapshots[-1]["gpu_types"]),
            validate=last.validate_seconds,
            build=last.build_seconds,
            solve=last.solve_seconds,
            total=p95,
            objective=results[-1].objective,
            status=results[-1].status.value,
            backend=f"{last.backend}/{last.solver}",
            ratio=p95 / base,
            note=note + f"; baseline p95 {base:.3f}",
        )

    return run


def _case(name: str, make: Any, target: float, baseline: dict[str, Any]) -> Case:
    return Case(
        GROUP,
        name,
        lambda: {},
        POLICY,
        {},
        target_seconds=target,
        baseline=baseline,
        runner=_runner(make, baseline),
    )


def cases() -> list[Case]:
    presolve_on = {"presolve": "on"}
    return [
        _case("sia, 64 GPUs, Saturn 1 rounds (p95)", _simulated_rounds, 0.05, presolve_on),
        _case("sia, 2,048 GPUs, 600 distinct jobs (p95)", _scale_rounds, 0.5, presolve_on),
        _case(
            "sia, 2,048 GPUs, 5,120 jobs at once (p95)",
            _fresh_rounds,
            5.0,
            {"merge_identical": False},
        ),
    ]
