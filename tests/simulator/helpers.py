"""Hand-made traces whose outcomes can be worked out on paper."""

from __future__ import annotations

from collections.abc import Sequence

from apportion.simulator.trace import Cluster, Deadline, Trace, TraceJob


def job(
    name: str,
    seconds: float,
    *,
    arrival: float = 0.0,
    gpus: int = 1,
    speed: dict[str, float] | None = None,
    deadlines: Sequence[Deadline] = (),
    job_class: str | None = None,
    workload_class: str | None = None,
) -> TraceJob:
    """A job that takes `seconds` alone on its fastest type (speed: steps/s per type)."""
    speed = speed or {"v100": 10.0}
    steps = seconds * max(speed.values())
    return TraceJob(
        id=name,
        arrival=arrival,
        scale_factor=gpus,
        total_steps=steps,
        throughput=dict(speed),
        deadlines=tuple(deadlines),
        job_class=job_class,
        workload_class=workload_class,
    )


def trace(jobs: Sequence[TraceJob], gpus: dict[str, int] | None = None, per_node: int = 4) -> Trace:
    cluster = Cluster.uniform(gpus or {"v100": 1}, per_node)
    ordered = tuple(sorted(jobs, key=lambda j: j.arrival))
    return Trace(name="hand-made", jobs=ordered, cluster=cluster, source="tests")
