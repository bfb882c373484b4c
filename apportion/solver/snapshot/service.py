"""Attained service and its distribution: what the Tiresias priorities read (FORMULATIONS §10).

A job's attained service is W_J × t_J, its GPUs times the seconds it has run, counted since it
last entered the top queue (at arrival, or when a starvation promotion put it back); the caller
keeps the count, as a scheduler does, and resets it when an answer says `promoted`. The
distribution of past jobs' GPU-times (samples, or a histogram of point masses) is what the
2D-Gittins index needs; 2D-LAS needs none. Tensor sizes tell how skewed a model is (its largest
tensor's share), the consolidation sensitivity Tiresias's profiler measures. The job fields
(`attained_service`, `pending_seconds`, `started_at`, `queue_order`, `tensor_sizes`) are
declared on `Job`.
"""

from __future__ import annotations

from pydantic import Field

from apportion.solver.snapshot.types import Positive, Strict

#: Samples or histogram bins a distribution may carry: far above any history a scheduler keeps
#: (the reference's file has 10,000), and bounded so an index costs jobs × bins at most.
MAX_POINTS = 1_000_000


class HistogramBin(Strict):
    """A point mass: `count` past jobs of `gpu_seconds` GPU-seconds each."""

    gpu_seconds: Positive = Field(description="GPU-seconds (GPUs × seconds run) of these jobs.")
    count: Positive = Field(description="How many past jobs (any positive weight).")


class ServiceDistribution(Strict):
    """Past jobs' total GPU-times (GPUs × seconds run to completion): give `samples` or a
    `histogram`, not both."""

    samples: list[Positive] | None = Field(
        default=None,
        max_length=MAX_POINTS,
        description="GPU-seconds of past jobs, one per job (e.g. Tiresias's YARN samples).",
    )
    histogram: list[HistogramBin] | None = Field(
        default=None,
        max_length=MAX_POINTS,
        description="Point masses of past jobs' GPU-seconds with their counts.",
    )


#: Tensors a job may list: ResNet-152 has a few hundred, the largest models a few thousand.
MAX_TENSORS = 100_000
