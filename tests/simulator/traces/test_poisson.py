"""Gavel's generator: deterministic per seed, the rate asked for, Gavel's mixes, jobs that fit."""

from __future__ import annotations

import math

import pytest

from apportion.refdata.synthetic import load_gavel_table
from apportion.simulator.trace import Cluster
from apportion.simulator.traces import GAVEL_SIMULATED_CLUSTER, poisson_trace
from apportion.solver.errors import InputError


def test_the_same_seed_gives_the_same_trace_and_another_seed_another() -> None:
    first = poisson_trace(2.0, 300, seed=7)
    assert poisson_trace(2.0, 300, seed=7) == first
    other = poisson_trace(2.0, 300, seed=8)
    assert [j.arrival for j in other.jobs] != [j.arrival for j in first.jobs]
    assert [j.workload_class for j in other.jobs] != [j.workload_class for j in first.jobs]
    assert "seed=7" in first.source


@pytest.mark.parametrize("rate", [0.5, 6.0, 40.0])
def test_the_empirical_arrival_rate_is_within_10_percent_over_2000_jobs(rate: float) -> None:
    trace = poisson_trace(rate, 2000, seed=3)
    arrivals = [job.arrival for job in trace.jobs]
    assert arrivals[0] == 0.0 and arrivals == sorted(arrivals)
    per_hour = (len(arrivals) - 1) / (arrivals[-1] / 3600.0)
    assert per_hour == pytest.approx(rate, rel=0.10)


def test_every_job_is_a_table_type_that_fits_the_cluster() -> None:
    table = load_gavel_table()
    trace = poisson_trace(4.0, 2000, seed=0)
    counts = trace.cluster.gpu_counts
    assert counts == {"v100": 36, "p100": 36, "k80": 36}
    assert trace.cluster == GAVEL_SIMULATED_CLUSTER
    for job in trace.jobs:
        job_type = (job.workload_class or "", job.scale_factor)
        assert job_type in table.job_types
        assert job.throughput == table.throughput(job_type)
        assert any(counts[k] >= job.scale_factor for k, v in job.throughput.items() if v > 0)


def test_scale_factors_and_durations_follow_gavels_distributions() -> None:
    trace = poisson_trace(4.0, 4000, seed=1)
    scales = [job.scale_factor for job in trace.jobs]
    for scale_factor, share in ((1, 0.70), (2, 0.10), (4, 0.15), (8, 0.05)):
        assert scales.count(scale_factor) / len(scales) == pytest.approx(share, abs=0.025)
    # Run time alone on a V100, in minutes: 10^x with x in [1.5, 3] (80 %) or [3, 4] (20 %).
    exponents = [math.log10(job.total_steps / job.throughput["v100"] / 60.0) for job in trace.jobs]
    assert min(exponents) >= 1.5 - 1e-9 and max(exponents) <= 4.0 + 1e-9
    long = sum(x > 3.0 for x in exponents) / len(exponents)
    assert long == pytest.approx(0.2, abs=0.025)


def test_single_gpu_and_short_only_variants() -> None:
    trace = poisson_trace(4.0, 500, seed=2, multi_gpu=False, long_fraction=0.0)
    assert {job.scale_factor for job in trace.jobs} == {1}
    assert max(job.total_steps / job.throughput["v100"] for job in trace.jobs) <= 60_000.0
    assert len({job.workload_class for job in trace.jobs}) == 26  # every model at scale 1


def test_single_gpu_jobs_carry_their_co_located_pairs() -> None:
    job = next(j for j in poisson_trace(4.0, 50, seed=0).jobs if j.scale_factor == 1)
    assert job.pairs and all(a > 0 and b > 0 for p in job.pairs.values() for a, b in p.values())


def test_a_cluster_too_small_for_a_drawable_job_is_refused() -> None:
    small = Cluster.uniform({"v100": 4, "p100": 4, "k80": 4}, gpus_per_node=4)
    with pytest.raises(InputError, match="scale factor 8 exceeds"):
        poisson_trace(4.0, 10, cluster=small)
    assert len(poisson_trace(4.0, 10, cluster=small, multi_gpu=False).jobs) == 10


def test_bad_parameters_are_input_errors() -> None:
    with pytest.raises(InputError, match="jobs_per_hour"):
        poisson_trace(0.0, 10)
    with pytest.raises(InputError, match="num_jobs"):
        poisson_trace(1.0, 0)
    with pytest.raises(InputError, match="long_fraction"):
        poisson_trace(1.0, 10, long_fraction=1.5)
