"""Gavel's physical-cluster traces (`.trace`) with its throughput table, as a `Trace`.

A line is one job, 10 TAB-separated fields (Gavel's `utils.parse_trace`):

    job_type  command  working_directory  num_steps_arg  needs_data_dir  total_steps
    scale_factor  priority_weight  SLO  arrival_time_s

Units and conventions:

- `total_steps`: the job's work in steps (Gavel's iterations); `throughput[k]`: steps/s of the
  whole job on GPU type k at its scale factor, Gavel's isolated entry (`null`) for
  `(job_type, scale_factor)`. A type whose entry is 0 (K80 × ResNet-50 bs 128 at scale factor
  > 1) is left out: the job cannot run there. Types the cluster lacks are left out too.
- `pairs`: the table's co-located entries between equal scale factors, keyed by the other job's
  type: `{other: {k: (this job's steps/s, the other's steps/s)}}`, only the GPU types where both
  run (Gavel records a 0 when a pair cannot share a GPU; 616 of its 921 pairs have one).
- `workload_class` = the job type (model and batch size); `weight` = priority_weight; ids
  `job-<i>`, i the job's position in the file (from 0); arrival in seconds, as in the file.
- SLO: -1 is none. A positive SLO s gives one deadline at arrival + s × (total_steps / the
  throughput on the reference type, V100): Gavel's `SLO × duration`, the duration being the
  job's run time alone on the reference type.

The default cluster is Gavel's physical one, 8 V100 + 16 P100 + 24 K80, on servers of 4 GPUs (the
server size is our reading: Gavel's EXPERIMENTS.md starts its workers with `-g 4`); pass any
`Cluster` instead.
"""

from __future__ import annotations

from pathlib import Path

from apportion.refdata import SOURCE
from apportion.refdata.gavel import GavelTable, JobType
from apportion.refdata.synthetic import load_gavel_table
from apportion.simulator.trace import Cluster, Deadline, Trace, TraceJob
from apportion.simulator.traces.errors import TraceError
from apportion.simulator.traces.parsing import Row, read_lines

MAX_MIN_FAIRNESS_TRACE = SOURCE / "gavel_max_min_fairness.trace"  # 96 jobs
MINIMIZE_MAKESPAN_TRACE = SOURCE / "gavel_minimize_makespan.trace"  # 100 jobs, all at t = 0

#: Gavel's 48-GPU physical cluster.
GAVEL_PHYSICAL_CLUSTER = Cluster.uniform({"v100": 8, "p100": 16, "k80": 24}, gpus_per_node=4)

TRACE_FIELDS = (
    "job_type",
    "command",
    "working_directory",
    "num_steps_arg",
    "needs_data_dir",
    "total_steps",
    "scale_factor",
    "priority_weight",
    "slo",
    "arrival_time",
)
NO_SLO = -1.0
REFERENCE_TYPE = "v100"


class JobTypes:
    """Gavel's table as one cluster sees it: throughputs and co-located pairs per job type,
    restricted to the cluster's GPU types and computed once per type."""

    def __init__(self, table: GavelTable, cluster: Cluster) -> None:
        self.table = table
        self.counts = cluster.gpu_counts
        self._known = set(table.job_types)
        self._throughput: dict[JobType, dict[str, float]] = {}
        self._pairs: dict[JobType, dict[str, dict[str, tuple[float, float]]]] = {}

    def unknown(self, job_type: JobType) -> str | None:
        """Why the table has no such job type, or None if it has."""
        if job_type in self._known:
            return None
        model, scale_factor = job_type
        scales = sorted(sf for m, sf in self._known if m == model)
        if scales:
            listed = ", ".join(map(str, scales))
            return f"job type {model!r} has no scale factor {scale_factor} (only {listed})"
        return f"unknown job type {model!r}: not in Gavel's throughput table"

    def throughput(self, job_type: JobType) -> dict[str, float]:
        if job_type not in self._throughput:
            full = self.table.throughput(job_type)
            self._throughput[job_type] = {k: v for k, v in full.items() if k in self.counts}
        return self._throughput[job_type]

    def rate_on(self, job_type: JobType, gpu_type: str) -> float:
        """Steps/s on `gpu_type` from the whole table (the cluster may lack that type)."""
        return self.table.throughput(job_type).get(gpu_type, 0.0)

    def misfit(self, job_type: JobType) -> str | None:
        """Why no GPU type of the cluster can hold the job (None: one can)."""
        throughput = self.throughput(job_type)
        if not throughput:
            return f"job type {job_type[0]!r} cannot run on any GPU type of the cluster"
        if any(self.counts[k] >= job_type[1] for k in throughput):
            return None
        counts = ", ".join(f"{k}: {self.counts[k]}" for k in throughput)
        return f"scale factor {job_type[1]} exceeds every GPU type it can run on ({counts})"

    def pairs(self, job_type: JobType) -> dict[str, dict[str, tuple[float, float]]]:
        if job_type not in self._pairs:
            self._pairs[job_type] = self._co_located(job_type)
        return self._pairs[job_type]

    def _co_located(self, job_type: JobType) -> dict[str, dict[str, tuple[float, float]]]:
        out: dict[str, dict[str, tuple[float, float]]] = {}
        for other in self.table.job_types:
            if other[1] != job_type[1]:
                continue
            entry = self.table.pairs.get((job_type, other))
            if entry is None and (other, job_type) in self.table.pairs:
                flipped = self.table.pairs[(other, job_type)]
                entry = {k: (b, a) for k, (a, b) in flipped.items()}
            usable = {
                k: (a, b)
                for k, (a, b) in (entry or {}).items()
                if k in self.counts and a > 0 and b > 0
            }
            if usable:
                out[other[0]] = usable
        return out

    def job(
        self,
        job_id: str,
        job_type: JobType,
        total_steps: float,
        arrival: float,
        weight: float = 1.0,
        deadlines: tuple[Deadline, ...] = (),
    ) -> TraceJob:
        return TraceJob(
            id=job_id,
            arrival=arrival,
            scale_factor=job_type[1],
            total_steps=total_steps,
            throughput=dict(self.throughput(job_type)),
            weight=weight,
            workload_class=job_type[0],
            deadlines=deadlines,
            pairs=self.pairs(job_type),  # shared by the jobs of a type: read-only
        )


def read_gavel_trace(
    path: str | Path = MAX_MIN_FAIRNESS_TRACE,
    *,
    table: GavelTable | None = None,
    cluster: Cluster | None = None,
    reference_type: str = REFERENCE_TYPE,
) -> Trace:
    """A Gavel physical-cluster trace on `cluster` (default: Gavel's 8/16/24 physical one), with
    throughputs from `table` (default: the bundled `gavel_throughputs.json`). Raises a
    `TraceError` naming the line for a malformed row, an unknown job type, a negative or zero
    step count, or a job no GPU type of the cluster can hold."""
    source = Path(path)
    cluster = cluster or GAVEL_PHYSICAL_CLUSTER
    types = JobTypes(table or load_gavel_table(), cluster)
    jobs: list[TraceJob] = []
    for number, line in enumerate(read_lines(source), start=1):
        if not line.strip():
            continue
        fields = line.split("\t")
        row = Row(source, dict(zip(TRACE_FIELDS, fields, strict=False)), line=number)
        if len(fields) != len(TRACE_FIELDS):
            raise row.error(
                f"{len(fields)} TAB-separated fields, expected {len(TRACE_FIELDS)} "
                f"({', '.join(TRACE_FIELDS)})"
            )
        jobs.append(_job(row, f"job-{len(jobs)}", types, reference_type))
    if not jobs:
        raise TraceError(source, "no jobs in the file")
    return Trace(
        name=source.stem,
        jobs=tuple(sorted(jobs, key=lambda job: job.arrival)),
        cluster=cluster,
        source=str(source),
    )


def _job(row: Row, job_id: str, types: JobTypes, reference_type: str) -> TraceJob:
    job_type = (row.text("job_type"), row.integer("scale_factor", minimum=1))
    reason = types.unknown(job_type)
    if reason is None:
        reason = types.misfit(job_type)
    if reason is not None:
        raise row.error(reason)
    row.integer("needs_data_dir")
    total_steps = row.number("total_steps", strict=True)
    arrival = row.number("arrival_time")
    slo = row.number("slo", minimum=NO_SLO)
    deadlines: tuple[Deadline, ...] = ()
    if slo > 0:
        rate = types.rate_on(job_type, reference_type)
        if rate <= 0:
            raise row.error(f"an SLO needs the job's throughput on {reference_type}; it has none")
        deadlines = (Deadline(arrival + slo * total_steps / rate),)
    elif slo != NO_SLO:
        raise row.error(f"SLO is {slo:g}: must be positive, or -1 for none")
    weight = row.number("priority_weight", strict=True)
    return types.job(job_id, job_type, total_steps, arrival, weight, deadlines)
