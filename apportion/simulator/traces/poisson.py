"""Gavel's generated workloads: Poisson arrivals over its job types, deterministic for a seed.

What is drawn, after Gavel's simulator (`scheduler/utils.py`: `generate_job`,
`_generate_scale_factor`, `_generate_duration`; the arrival process of its continuous traces):

- inter-arrival times: exponential with mean 3600 / `jobs_per_hour` seconds; the first job
  arrives at t = 0 (Gavel's `lam` is that mean: lam = 9000 s is 0.4 jobs/h);
- scale factor (with `multi_gpu`, Gavel's `--generate-multi-gpu-jobs`): 1, 2, 4, 8 with
  probability 0.70, 0.10, 0.15, 0.05 (Philly's distribution as Gavel samples it); without, 1;
- job type: uniform over the table's job types at that scale factor (Gavel draws a model
  uniformly, redrawing until it has one that runs distributed: the same distribution);
- duration on the reference type (V100) alone: 10^x minutes with x uniform in [1.5, 3]
  (≈ 32 minutes to 17 hours), except a fraction `long_fraction` (Gavel: 0.2) with x uniform in
  [3, 4] (17 to 167 hours); `long_fraction=0` gives the short range only;
- total steps = duration (seconds) × the type's throughput on the reference type, so a job runs
  that long alone on a V100 (Gavel's `num_steps = run_time × throughput`).

Every job has weight 1 and no SLO. Throughputs and co-located pairs come from the table as for
trace files (`simulator.traces.gavel`). The default cluster is Gavel's simulated one, 36 V100 +
36 P100 + 36 K80, here on nodes of 4 GPUs.
"""

from __future__ import annotations

import numpy as np

from apportion.refdata.gavel import GavelTable, JobType
from apportion.refdata.synthetic import load_gavel_table
from apportion.simulator.trace import Cluster, Trace
from apportion.simulator.traces.gavel import REFERENCE_TYPE, JobTypes
from apportion.solver.errors import InputError

#: Gavel's simulated cluster (`-c 36:36:36` in its sweeps).
GAVEL_SIMULATED_CLUSTER = Cluster.uniform({"v100": 36, "p100": 36, "k80": 36}, gpus_per_node=4)

SCALE_FACTORS = (1, 2, 4, 8)
SCALE_MIX = (0.70, 0.10, 0.15, 0.05)
SHORT_EXPONENT = (1.5, 3.0)  # log10 of minutes
LONG_EXPONENT = (3.0, 4.0)
LONG_FRACTION = 0.2


def poisson_trace(
    jobs_per_hour: float,
    num_jobs: int,
    seed: int = 0,
    *,
    cluster: Cluster | None = None,
    table: GavelTable | None = None,
    multi_gpu: bool = True,
    long_fraction: float = LONG_FRACTION,
    reference_type: str = REFERENCE_TYPE,
) -> Trace:
    """`num_jobs` jobs arriving as a Poisson process of `jobs_per_hour`, drawn as Gavel does (see
    the module docstring); the same arguments give the same trace. Raises `InputError` for a
    non-positive rate or count, a fraction outside [0, 1], or a cluster on which some job type
    that can be drawn fits no GPU type."""
    _check(jobs_per_hour, num_jobs, long_fraction)
    cluster = cluster or GAVEL_SIMULATED_CLUSTER
    types = JobTypes(table or load_gavel_table(), cluster)
    scales = SCALE_FACTORS if multi_gpu else (1,)
    by_scale = {sf: [jt for jt in types.table.job_types if jt[1] == sf] for sf in scales}
    _check_fit(types, by_scale, reference_type)

    rng = np.random.default_rng(seed)
    gaps = rng.exponential(3600.0 / jobs_per_hour, size=num_jobs)
    arrivals = np.concatenate(([0.0], np.cumsum(gaps[:-1])))
    draw = rng.random(num_jobs)
    scale = np.ones(num_jobs, dtype=int)
    if multi_gpu:
        band = np.searchsorted(np.cumsum(SCALE_MIX), draw, side="right")
        scale = np.array(SCALE_FACTORS)[np.minimum(band, len(SCALE_FACTORS) - 1)]
    pick = rng.random(num_jobs)
    long = rng.random(num_jobs) < long_fraction
    exponent = np.where(
        long, rng.uniform(*LONG_EXPONENT, num_jobs), rng.uniform(*SHORT_EXPONENT, num_jobs)
    )
    seconds = 60.0 * 10.0**exponent
    jobs = []
    for i in range(num_jobs):
        choices = by_scale[int(scale[i])]
        job_type = choices[min(int(pick[i] * len(choices)), len(choices) - 1)]
        steps = float(seconds[i]) * types.rate_on(job_type, reference_type)
        jobs.append(types.job(f"job-{i}", job_type, steps, float(arrivals[i])))
    detail = f"jobs_per_hour={jobs_per_hour:g}, num_jobs={num_jobs}, seed={seed}"
    return Trace(
        name=f"gavel-poisson-{jobs_per_hour:g}ph-seed{seed}",
        jobs=tuple(jobs),
        cluster=cluster,
        source=f"apportion.simulator.traces.poisson_trace({detail}, multi_gpu={multi_gpu}, "
        f"long_fraction={long_fraction:g})",
    )


def _check(jobs_per_hour: float, num_jobs: int, long_fraction: float) -> None:
    if not jobs_per_hour > 0 or not np.isfinite(jobs_per_hour):
        raise InputError.single(("jobs_per_hour",), f"must be positive, got {jobs_per_hour}")
    if num_jobs < 1:
        raise InputError.single(("num_jobs",), f"must be at least 1, got {num_jobs}")
    if not 0.0 <= long_fraction <= 1.0:
        raise InputError.single(("long_fraction",), f"must be in [0, 1], got {long_fraction}")


def _check_fit(types: JobTypes, by_scale: dict[int, list[JobType]], reference_type: str) -> None:
    for scale_factor, job_types in by_scale.items():
        if not job_types:
            raise InputError.single(
                ("table",), f"no job type at scale factor {scale_factor} in the table"
            )
        for job_type in job_types:
            reason = types.misfit(job_type)
            if reason is None and types.rate_on(job_type, reference_type) <= 0:
                reason = f"{job_type[0]!r} has no throughput on the reference type"
            if reason is not None:
                raise InputError.single(("cluster",), f"{reason} ({job_type[0]!r} can be drawn)")
