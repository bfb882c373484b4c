"""Hand-made traces whose outcomes can be worked out on paper."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from apportion.refdata.synthetic import GAVEL_TABLE
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


def gavel_throughputs_file(path: Path, scale: float = 1.0) -> Path:
    """The bundled table written in Gavel's own format (tuple keys, "null", pairs)."""
    compact = json.loads(GAVEL_TABLE.read_text())
    out: dict[str, dict[str, dict[str, Any]]] = {g: {} for g in compact["gpu_types"]}
    for entry in compact["job_types"]:
        key = repr((entry["model"], entry["scale_factor"]))
        for gpu in compact["gpu_types"]:
            out[gpu][key] = {"null": scale * entry["throughput"].get(gpu, 0.0)}
    for pair in compact["pairs"]:
        a, b = repr(tuple(pair["a"])), repr(tuple(pair["b"]))
        for gpu, (x, y) in pair["throughput"].items():
            out[gpu][a][b], out[gpu][b][a] = [scale * x, scale * y], [scale * y, scale * x]
    path.write_text(json.dumps(out))
    return path
