"""An elastic job's progress and restarts, against numbers worked out from Sia's data."""

from __future__ import annotations

import pytest

from apportion.refdata.sia import application
from apportion.simulator.elastic.jobs import ElasticJob

# placements-aws.csv of cifar10, one GPU: (91, 0.07591350078582763) and (129, 0.10385050773620605)
STEP_128 = 0.07591350078582763 + (128 - 91) / (129 - 91) * (
    0.10385050773620605 - 0.07591350078582763
)


def test_a_new_job_restores_then_progresses_at_its_first_batch() -> None:
    job = ElasticJob("c", application("cifar10"), arrival=0.0)
    assert job.place(0.0, "t4", {"t4-0": 1}) is True
    # no model yet: M = max(M0, b_min) = 128 on one GPU, no accumulation, gain 1
    assert (job.micro, job.steps) == (128, 0)
    job.advance(0.0, 60.0)
    # 50 s of checkpoint-restore (cifar10's D), then 10 s at 1/T_iter/1.8 M0-steps per second
    assert job.lost_seconds == pytest.approx(50.0)
    assert job.progress == pytest.approx(10.0 / STEP_128 / 1.8)
    assert job.gpu_seconds == pytest.approx(60.0)
    assert job.restarts == 0 and job.params["t4"] is not None and job.grad is not None


def test_keeping_the_shape_costs_nothing_and_a_new_shape_restarts() -> None:
    job = ElasticJob("c", application("cifar10"), arrival=0.0)
    job.place(0.0, "t4", {"t4-0": 1})
    job.advance(0.0, 60.0)
    assert job.place(60.0, "t4", {"t4-0": 1}) is False and job.delay == 0.0
    assert job.place(60.0, "t4", {"t4-1": 1}) is False and job.nodes == {"t4-1": 1}
    assert job.place(60.0, "t4", {"t4-1": 2}) is True
    assert job.delay == 50.0 and job.restarts == 1
    assert job.place(60.0, None, {}) is False and job.gpus == 0


def test_a_job_run_to_its_end_meets_its_target() -> None:
    job = ElasticJob("b", application("bert"), arrival=0.0)
    job.place(0.0, "a100", {"a100-0": 4})
    now = 0.0
    while not job.done and now < 48 * 3600:
        job.advance(now, 60.0)
        now += 60.0
    assert job.done and job.epoch == 2
    assert job.progress == pytest.approx(application("bert").target())
    assert job.finish is not None and now - 60.0 < job.finish <= now
    # it held 4 GPUs the whole time it ran
    assert job.gpu_seconds == pytest.approx(4 * job.finish)


def test_gradient_statistics_interpolate_between_runs() -> None:
    job = ElasticJob("c", application("cifar10"), arrival=0.0)
    # epoch 1 of validation-128 (8.947, 5.067) and validation-256 (17.379, 13.938), halfway
    sqr, var = job.grad_stats(192)
    assert sqr == pytest.approx((8.947307535897329 + 17.379458169870425) / 2)
    assert var == pytest.approx((5.066593295150894 + 13.937760473946334) / 2)
    assert job.grad_stats(64) == job.grad_stats(128)  # below M0: M0's
