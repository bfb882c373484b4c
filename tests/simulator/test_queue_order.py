"""The order inside a Tiresias queue, as Tiresias's simulator keeps it: a job joins the back of
its queue when it arrives or is demoted, and after each decision the jobs that run move ahead of
those that wait. Outcomes worked out by hand (Tiresias's own simulator, `dlas-gpu` with its
`count` placement, gives the same on the first case)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from apportion.simulator.config import SimConfig
from apportion.simulator.engine import simulate
from apportion.simulator.trace import TraceJob
from tests.simulator.helpers import job, trace

SPEED = {"gpu": 1.0}
#: Tiresias's simulator's queues, greedy admission, no consolidation: its `dlas-gpu` world.
LAS = {"thresholds": [3250.0, 7200.0], "admission": "greedy", "pack_limit": 1.0}


def _finish(jobs: Sequence[TraceJob], gpus: int) -> dict[str, float]:
    config = SimConfig(policy="tiresias_las", options=LAS)
    result = simulate(trace(jobs, {"gpu": gpus}, per_node=gpus), config)
    return {str(k): float(v) for k, v in result.records.set_index("job")["finish"].items()}


def test_a_running_job_stays_ahead_of_one_that_started_earlier() -> None:
    """Three GPUs. x (1 GPU, 10,000 s) starts at 0, y (2 GPUs, 5,000 s) at 1. y reaches 3,250
    GPU-seconds at 1,626 and x at 3,250: both fall to the second queue, y first, and both run
    on. z (1 GPU, 100 s) arrives at 3,300 in the top queue and takes a GPU: of the second
    queue, y runs ahead of x (it joined first), keeps its two GPUs, and x waits until z ends at
    3,400. So y ends at 5,001, x at 3,300 + 100 + 6,700 = 10,100. Served by first start
    instead, x would have kept its GPU and y waited (x at 10,000, y at 5,101)."""
    jobs = [
        job("x", 10_000.0, speed=SPEED),
        job("y", 5_000.0, arrival=1.0, gpus=2, speed=SPEED),
        job("z", 100.0, arrival=3_300.0, speed=SPEED),
    ]
    finish = _finish(jobs, 3)
    assert finish == pytest.approx({"x": 10_100.0, "y": 5_001.0, "z": 3_400.0})
