"""Chronus's Philly traces (SoCC'21 artifact) as a `Trace`: CSV (plain or `.csv.gz`) or the
bundled JSON form of the MIX2 head (`refdata/source/chronus_mix2_head200.json`). Also bundled:
the first two hours of the full MIX1, MIX2 and SLO traces (`MIX1_FIRST_2H`, `MIX2_FIRST_2H`,
`SLO_FIRST_2H`).

CSV columns: `job_id, user, num_gpu, submit_time, iterations, model_name, duration, interval,
expect_time_list, expect_value_list, best_effort, job_type`. Units and conventions:

- times in the file are minutes; the `Trace` has seconds: arrival = 60 × submit_time;
- one GPU type (`gpu_type`, default "gpu") at 1 step/s and total_steps = 60 × duration, the true
  run time on the requested GPUs (`simulator.traces.durations`);
- deadlines: `expect_time_list` is relative to submission, `-`-separated; each becomes
  Deadline(60 × (submit_time + expect_time), value) with the value at the same place in
  `expect_value_list`. Strict jobs have one, soft jobs four (10/8/5/2); best-effort jobs none
  (their expect_time is a placeholder equal to submit_time, ignored);
- job_class: `strict`, `soft`, `best_effort` (the file's `best`); workload_class = model_name,
  entity = user (the virtual cluster); ids `job-<job_id>`; jobs sorted by arrival (the file is
  not), ties in file order;
- rows with num_gpu 0 are left out, as Chronus's simulator does, and counted in
  `Trace.dropped[ZERO_GPU]`.

The cluster: `nodes` nodes of 8 GPUs (default 120, the artifact's Philly runs: 960 GPUs).
`first` keeps the first N jobs by arrival; only those must fit the cluster (a small cluster
can replay the head of a trace whose later jobs are larger than it).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from apportion.refdata import SOURCE
from apportion.refdata.chronus import MIX2_HEAD
from apportion.simulator.sources import TraceSpec, single_type_nodes
from apportion.simulator.trace import Deadline, Trace, TraceJob
from apportion.simulator.traces.durations import DEFAULT_GPU_TYPE, single_type_cluster, timed_job
from apportion.simulator.traces.errors import TraceError
from apportion.simulator.traces.parsing import Row, csv_rows, read_json

MIX2_HEAD_CSV = SOURCE / "chronus_mix2_head200.csv"
MIX2_HEAD_JSON = MIX2_HEAD
# Every row of the full MIX1 / MIX2 traces submitted in their first two hours (minute < 120).
MIX1_FIRST_2H = SOURCE / "chronus_mix1_first2h.csv"
MIX2_FIRST_2H = SOURCE / "chronus_mix2_first2h.csv"
SLO_FIRST_2H = SOURCE / "chronus_slo_first2h.csv"

CSV_COLUMNS = (
    "job_id",
    "user",
    "num_gpu",
    "submit_time",
    "model_name",
    "duration",
    "expect_time_list",
    "expect_value_list",
    "best_effort",
    "job_type",
)
ZERO_GPU = "num_gpu is 0 (no GPU demand; Chronus's simulator skips these rows)"
JOB_CLASSES = {"strict": "strict", "soft": "soft", "best": "best_effort"}
NODES = 120
GPUS_PER_NODE = 8
MINUTE = 60.0


def read_chronus(
    path: str | Path = MIX2_HEAD_JSON,
    *,
    nodes: int = NODES,
    gpus_per_node: int = GPUS_PER_NODE,
    gpu_type: str = DEFAULT_GPU_TYPE,
    first: int | None = None,
) -> Trace:
    """A Chronus trace in either form: `.json` is the bundled form, anything else a CSV."""
    reader = read_chronus_json if Path(path).suffix == ".json" else read_chronus_csv
    return reader(path, nodes=nodes, gpus_per_node=gpus_per_node, gpu_type=gpu_type, first=first)


def read_chronus_csv(
    path: str | Path = MIX2_HEAD_CSV,
    *,
    nodes: int = NODES,
    gpus_per_node: int = GPUS_PER_NODE,
    gpu_type: str = DEFAULT_GPU_TYPE,
    first: int | None = None,
) -> Trace:
    """A Chronus CSV trace (plain or gzip-compressed). Raises a `TraceError` naming the line for
    a malformed row, a negative value, mismatched deadline and value lists, an unknown job class,
    or a job larger than the cluster."""
    source = Path(path)
    jobs = (_csv_job(row, gpu_type) for row in csv_rows(source, CSV_COLUMNS))
    return _trace(source, jobs, (nodes, gpus_per_node, gpu_type), first)


def read_chronus_json(
    path: str | Path = MIX2_HEAD_JSON,
    *,
    nodes: int = NODES,
    gpus_per_node: int = GPUS_PER_NODE,
    gpu_type: str = DEFAULT_GPU_TYPE,
    first: int | None = None,
) -> Trace:
    """The JSON form `{"jobs": [{"id", "num_gpu", "submit_minute", "duration_minutes",
    "deadline_minutes", "values", "job_class"}, ...]}` (minutes, deadlines relative to
    submission), with the CSV's conventions; errors name the job's id (or position)."""
    source = Path(path)
    data = read_json(source)
    items = data.get("jobs") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise TraceError(source, 'expected an object with a "jobs" list')
    rows = (
        Row(source, item, item=str(item.get("id", i)))
        if isinstance(item, dict)
        else Row(source, {}, item=str(i))
        for i, item in enumerate(items)
    )
    jobs = (_json_job(row, gpu_type) for row in rows)
    return _trace(source, jobs, (nodes, gpus_per_node, gpu_type), first)


def _trace(
    source: Path,
    rows: Iterable[tuple[Row, TraceJob | None]],
    shape: tuple[int, int, str],
    first: int | None = None,
) -> Trace:
    nodes, gpus_per_node, gpu_type = shape
    cluster = single_type_cluster(nodes, gpus_per_node, gpu_type)
    capacity = nodes * gpus_per_node
    kept: list[tuple[Row, TraceJob]] = []
    zero = 0
    for row, job in rows:
        if job is None:
            zero += 1
        else:
            kept.append((row, job))
    kept.sort(key=lambda pair: pair[1].arrival)  # stable: ties in file order
    kept = kept[:first] if first is not None else kept
    for row, job in kept:
        if job.scale_factor > capacity:
            raise row.error(
                f"num_gpu is {job.scale_factor}, more than the cluster's {capacity} GPUs"
            )
    if not kept:
        raise TraceError(source, "no jobs in the file")
    return Trace(
        name=source.name.split(".")[0],
        jobs=tuple(job for _, job in kept),
        cluster=cluster,
        source=str(source),
        dropped={ZERO_GPU: zero} if zero else {},
    )


def _csv_job(row: Row, gpu_type: str) -> tuple[Row, TraceJob | None]:
    """The row's job, or None for a row the zero-GPU rule drops."""
    job_class = _job_class(row, row.text("job_type"), JOB_CLASSES)
    if row.integer("best_effort") != (job_class == "best_effort"):
        raise row.error(f"best_effort is {row.value('best_effort')!r} for a {job_class} job")
    deadlines: tuple[Deadline, ...] = ()
    submit = row.number("submit_time")
    if job_class != "best_effort":
        deadlines = _deadlines(row, submit, "expect_time_list", "expect_value_list", "-")
    gpus = row.integer("num_gpu")
    job = timed_job(
        f"job-{row.integer('job_id')}",
        gpus=gpus,
        arrival=MINUTE * submit,
        run_seconds=MINUTE * row.number("duration", strict=True),
        gpu_type=gpu_type,
        workload_class=row.text("model_name"),
        entity=row.text("user"),
        deadlines=deadlines,
        job_class=job_class,
    )
    return row, job if gpus > 0 else None


def _json_job(row: Row, gpu_type: str) -> tuple[Row, TraceJob | None]:
    job_class = _job_class(row, row.text("job_class"), {c: c for c in JOB_CLASSES.values()})
    submit = row.number("submit_minute")
    deadlines: tuple[Deadline, ...] = ()
    if job_class != "best_effort":
        deadlines = _deadlines(row, submit, "deadline_minutes", "values", "-")
    gpus = row.integer("num_gpu")
    job = timed_job(
        row.text("id"),
        gpus=gpus,
        arrival=MINUTE * submit,
        run_seconds=MINUTE * row.number("duration_minutes", strict=True),
        gpu_type=gpu_type,
        deadlines=deadlines,
        job_class=job_class,
    )
    return row, job if gpus > 0 else None


def _job_class(row: Row, name: str, known: dict[str, str]) -> str:
    if name not in known:
        raise row.error(f"job class {name!r} is not one of {', '.join(known)}")
    return known[name]


def _deadlines(
    row: Row, submit: float, times: str, values: str, separator: str
) -> tuple[Deadline, ...]:
    relative = row.numbers(times, separator)
    worth = row.numbers(values, separator)
    if not relative:
        raise row.error(f"an SLO job needs at least one deadline in {times}")
    if len(relative) != len(worth):
        raise row.error(f"{len(relative)} deadlines in {times} but {len(worth)} {values}")
    return tuple(
        Deadline(time=MINUTE * (submit + t), value=v) for t, v in zip(relative, worth, strict=True)
    )


def from_spec(spec: TraceSpec) -> Trace:
    """The trace a `TraceSpec` of kind `chronus` names; the first `jobs` are kept by the
    reader, so only they must fit a small cluster."""
    nodes = single_type_nodes(spec)
    if spec.source:
        return read_chronus(spec.source, first=spec.jobs, **nodes)
    return read_chronus(first=spec.jobs, **nodes)


def chronus_spec(
    path: Path, jobs: int | None, gpus: int, reference_gpus: int = 32, offered: float = 0.8
) -> TraceSpec:
    """The first `jobs` (None: all) of a Chronus trace on one type of `gpus` GPUs in 8-GPU
    nodes, arrivals spread (`load`) so that `reference_gpus` GPUs would be offered `offered`
    of their time over the arrival span: contended below `reference_gpus`. Chronus's traces
    submit their first jobs in bursts meant for 960 GPUs; spread out, a small cluster sees the
    same jobs at a load it can be compared at."""
    trace = TraceSpec("chronus", str(path), jobs=jobs).load_trace()
    arrival = [j.arrival for j in trace.jobs]
    work = sum(j.scale_factor * j.total_steps / j.throughput["gpu"] for j in trace.jobs)
    load = (max(arrival) - min(arrival)) / (work / (reference_gpus * offered))
    return TraceSpec(
        "chronus", str(path), jobs=jobs, load=load, cluster={"gpu": gpus}, gpus_per_node=8
    )


def chronus_sample(jobs: int, gpus: int, path: Path | None = None) -> Trace:
    """`chronus_spec`'s trace of a bundled sample (MIX2's first two hours by default), as in
    the deadlines notebook."""
    return chronus_spec(path or MIX2_FIRST_2H, jobs, gpus).load_trace()
