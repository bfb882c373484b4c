"""ONES's evolutionary search as the paper specifies it: one GPU's worth for a new job, limits
doubling per epoch, decisions that fit the nodes, and a run that finishes."""

from __future__ import annotations

import pytest

from apportion.refdata.sia import SIA_CLUSTER, application, workload
from apportion.simulator.elastic.engine import simulate_elastic
from apportion.simulator.elastic.jobs import ElasticJob
from apportion.simulator.elastic.ones import OnesSearch
from tests.simulator.elastic.test_engine import JOBS


def test_a_new_job_gets_one_gpu_then_its_limit_doubles_per_epoch() -> None:
    search = OnesSearch(SIA_CLUSTER, seed=1)
    job = ElasticJob("c", application("cifar10"), arrival=0.0)
    first = search.decide(0.0, [job])
    assert sum(first["c"].values()) == 1  # R = M0 = one GPU of batch 128
    assert search.limits["c"].limit == 128
    job.place(0.0, "t4", first["c"])
    job.epoch = 1  # an epoch later (σ·T_processed < 1): R' = ⌈2R / 1⌉
    search.decide(60.0, [job])
    assert search.limits["c"].limit == 256


def test_a_rejected_waiting_job_halves_its_limit() -> None:
    search = OnesSearch(SIA_CLUSTER, seed=1)
    job = ElasticJob("c", application("cifar10"), arrival=0.0)
    search.decide(0.0, [job])
    search.limits["c"].limit = 1024.0
    job.first_start = 0.0  # it ran before, and this round's schedule gave it nothing
    search._rejections([job], search.deployed * 0 - 1)
    search.decide(60.0, [job])
    assert search.limits["c"].limit == 512


def test_a_run_finishes_within_the_nodes() -> None:
    result = simulate_elastic(JOBS, SIA_CLUSTER, OnesSearch(SIA_CLUSTER, seed=0))
    assert result.summary["finished"] == len(JOBS)
    assert result.records["progress"].to_numpy() == pytest.approx(1.0)


def test_the_same_seed_gives_the_same_run() -> None:
    jobs = workload("saturn", 1)[:4]
    a = simulate_elastic(jobs, SIA_CLUSTER, OnesSearch(SIA_CLUSTER, seed=3))
    b = simulate_elastic(jobs, SIA_CLUSTER, OnesSearch(SIA_CLUSTER, seed=3))
    assert a.records["finish"].tolist() == b.records["finish"].tolist()
