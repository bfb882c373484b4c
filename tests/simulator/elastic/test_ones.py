"""ONES's scheduler rules on hand-built cases: a job that ran 2 epochs at its limit doubles it
(its claim capped at 4 × its request, the limit at the cluster), idle GPUs are filled, only the
largest job is scaled down, a change waits for an epoch; and on Sia's jobs the baseline lets a
job hold more than one GPU when the cluster is idle."""

from __future__ import annotations

import numpy as np
import pytest

from apportion.refdata.sia import SIA_CLUSTER, ClusterSpec, application, workload
from apportion.simulator.elastic.engine import Decision, simulate_elastic
from apportion.simulator.elastic.jobs import ElasticJob
from apportion.simulator.elastic.ones import OnesSearch, Tracked

SIXTEEN = ClusterSpec({"t4": 4}, {"t4": 4}, {"t4": 4})


def running(tid: int, size: int, limit: int, request: int = 1, epochs: int = 2) -> Tracked:
    return Tracked(tid, request, "running", None, 0, size, limit, epochs=epochs, remaining=1.0)


def test_a_job_at_its_limit_after_two_epochs_doubles_it_up_to_4x_its_request() -> None:
    search = OnesSearch(SIXTEEN)
    job = running(0, size=2, limit=2, request=1)
    search.jobs = [job]
    search.rescale([job])
    assert (job.limit, job.may_hold()) == (4, 4)
    job.size = 4  # it grew: the limit doubles again, its claim stays at 4 × 1 GPU asked
    search.rescale([job])
    assert (job.limit, job.may_hold()) == (8, 4)


def test_the_limit_stops_at_the_cluster_and_waits_for_two_epochs() -> None:
    search = OnesSearch(SIXTEEN)
    big, young = running(0, size=16, limit=16, request=8), running(1, 1, 1, epochs=1)
    search.jobs = [big, young]
    search.rescale([big, young])
    assert (big.limit, big.may_hold()) == (16, 16)
    assert (young.limit, young.may_hold()) == (1, 1)  # one epoch: not yet


def test_only_the_largest_long_running_job_is_scaled_down() -> None:
    search = OnesSearch(SIXTEEN)
    jobs = [running(0, 8, 8, request=2), running(1, 4, 4, request=1), running(2, 2, 2)]
    for t, hours in zip(jobs, (3.0, 1.0, 1.0), strict=True):
        t.run_time = hours * 3600
    search.jobs = jobs
    search.rescale(jobs)
    # median run time 1 h, the 8-GPU job has run 3 h: ⌊2·8 / (3 + 1)⌋ = 4 GPUs this loop
    assert [t.may_hold() for t in jobs] == [4, 4, 4]
    jobs[0].size, jobs[0].limit = 6, 6  # under half the cluster: nobody shrinks
    search.rescale(jobs)
    assert jobs[0].may_hold() == 8  # min(12, 4 × 2) claimed by growth alone


def _cifar(name: str, arrival: float = 0.0) -> ElasticJob:
    return ElasticJob(name, application("cifar10"), arrival)


def _enact(search: OnesSearch, now: float, jobs: list[ElasticJob]) -> Decision:
    decision = search.decide(now, jobs)
    for job in jobs:
        held = decision.get(job.name, {})
        job.place(now, "t4" if held else None, held)
    return decision


def test_idle_gpus_are_filled_after_two_epochs_and_an_epoch_gates_each_change() -> None:
    search = OnesSearch(SIXTEEN, {"a": 1, "b": 2}, seed=4)
    a, b = _cifar("a"), _cifar("b")
    first = _enact(search, 0.0, [a, b])
    assert [sum(first[n].values()) for n in "ab"] == [1, 1]  # new jobs: one GPU each
    for round_ in range(1, 12):
        for job in (a, b):  # each round an epoch more, at some throughput
            job.epoch, job.progress = job.epoch + 1, job.progress + job.gpus
        decision = _enact(search, 60.0 * round_, [a, b])
    held = [sum(decision[n].values()) for n in "ab"]
    assert sum(held) == 16  # every GPU busy, beyond the claims of 4 × 1 and 4 × 2
    # without a new epoch the schedule stays as it is
    assert _enact(search, 60.0 * 12, [a, b]) == decision


def test_on_sia_jobs_an_idle_cluster_gives_jobs_more_than_one_gpu() -> None:
    jobs = [j for j in workload("saturn", 1) if j.application == "cifar10"][:3]
    asked = {j.name: j.num_replicas for j in jobs}
    search = OnesSearch(SIA_CLUSTER, asked, seed=0)
    per_job: list[float] = []
    decide = search.decide

    def counted(now: float, active: list[ElasticJob]) -> Decision:
        decision = decide(now, active)
        per_job.append(sum(sum(d.values()) for d in decision.values()) / len(active))
        return decision

    search.decide = counted  # type: ignore[method-assign]
    result = simulate_elastic(jobs, SIA_CLUSTER, search)
    assert result.summary["finished"] == len(jobs)
    assert result.records["progress"].to_numpy() == pytest.approx(1.0)
    assert np.mean(per_job) > 2.0
    assert max(per_job) > 8


def test_the_same_seed_gives_the_same_run() -> None:
    jobs = workload("saturn", 1)[:4]
    a = simulate_elastic(jobs, SIA_CLUSTER, OnesSearch(SIA_CLUSTER, seed=3))
    b = simulate_elastic(jobs, SIA_CLUSTER, OnesSearch(SIA_CLUSTER, seed=3))
    assert a.records["finish"].tolist() == b.records["finish"].tolist()
