"""DeepShare's job traces (ICPADS'23) with its profiled throughputs and contention table, as a
`Trace`.

A trace file is `{"<key>": {"model", "gpu_demand", "total_samples_to_train"}, ...}`: no arrival
times, every job queued at t = 0 in key order. The profile (`jobs/` in DeepShare's repository,
copied to `refdata/source/deepshare_*.csv`) keys a configuration as (model, total GPUs, nodes
spanned). Units and conventions:

- a step is a training sample: `total_steps` = the job's `total_samples_to_train` (or, when the
  trace omits it, `total_samples_trained.csv` at the job's model and demand);
- `placement_throughput[n]`: DeepShare's isolated throughput (samples/s of the whole job,
  `isolated_thp.csv`) when the job spans n nodes, for every configuration of its model and
  demand that the cluster can hold (n ≤ nodes, demand / n ≤ GPUs per node);
- `throughput[gpu_type]` (one GPU type, default "gpu"): the mean of those isolated throughputs,
  the job's rate when the spread is not known. DeepShare sized its jobs on it: total samples =
  3600 × that mean on its 4 × 8 simulator, so every job runs about an hour alone;
- `workload_class` = the model as published (`GraphSage`, `MobileNetV3`, `DLRM`,
  `Transformer-XL`, `FSDP`, `MoE`), which is how the contention table names them;
- `Trace.contention`: the CS table of `shared_thp_ratio.csv` (CS = 1 / ratio, clipped at 1);
- ids `job-<key>`, arrival 0, in the file's order.

The cluster: `nodes` nodes of `gpus_per_node` GPUs (default DeepShare's simulator: 4 × 8).
"""

from __future__ import annotations

from pathlib import Path

from apportion.refdata import SOURCE
from apportion.refdata.deepshare import parse_config, read_contention_csv
from apportion.simulator.trace import Trace, TraceJob
from apportion.simulator.traces.durations import DEFAULT_GPU_TYPE, single_type_cluster
from apportion.simulator.traces.errors import TraceError
from apportion.simulator.traces.parsing import Row, csv_rows, read_json

TRACE0 = SOURCE / "deepshare_trace0.json"  # traces/real/trace0.json, 256 jobs
SIMULATE_TRACE0 = SOURCE / "deepshare_simulate_trace0.json"  # traces/simulate/trace0.json
CONTENTION_CSV = SOURCE / "deepshare_shared_thp_ratio.csv"
ISOLATED_CSV = SOURCE / "deepshare_isolated_thp.csv"
TOTAL_SAMPLES_CSV = SOURCE / "deepshare_total_samples_trained.csv"
NODES = 4
GPUS_PER_NODE = 8

Config = tuple[str, int, int]  # model, total GPUs, nodes


def read_isolated_throughputs(path: str | Path = ISOLATED_CSV) -> dict[Config, float]:
    """`isolated_thp.csv`: samples/s of each configuration alone on the cluster."""
    out: dict[Config, float] = {}
    for row in csv_rows(Path(path), ("isol_thp",)):
        try:
            config = parse_config(row.text(""))
        except ValueError as exc:
            raise row.error(str(exc)) from None
        out[config.key] = row.number("isol_thp", strict=True)
    return out


def read_total_samples(path: str | Path = TOTAL_SAMPLES_CSV) -> dict[tuple[str, int], float]:
    """`total_samples_trained.csv`: samples a job of each model and GPU demand trains."""
    out: dict[tuple[str, int], float] = {}
    for row in csv_rows(Path(path), ()):
        model = row.text("")
        for column in row.fields:
            if column:
                demand = _demand(row, column)
                out[(model, demand)] = row.number(column, strict=True)
    return out


def read_deepshare_trace(
    path: str | Path = TRACE0,
    *,
    contention_csv: str | Path | None = CONTENTION_CSV,
    isolated_csv: str | Path = ISOLATED_CSV,
    total_samples_csv: str | Path = TOTAL_SAMPLES_CSV,
    nodes: int = NODES,
    gpus_per_node: int = GPUS_PER_NODE,
    gpu_type: str = DEFAULT_GPU_TYPE,
) -> Trace:
    """A DeepShare trace on `nodes` × `gpus_per_node` GPUs, with the contention table of
    `contention_csv` (None: no table). Raises a `TraceError` naming the job's key for a missing
    or non-numeric field, a non-positive demand or sample count, a demand larger than the
    cluster, or a model and demand the profile has no throughput for on this cluster."""
    source = Path(path)
    data = read_json(source)
    if not isinstance(data, dict) or not data:
        raise TraceError(source, 'expected a non-empty object {"<job key>": {...}, ...}')
    isolated = read_isolated_throughputs(isolated_csv)
    totals = read_total_samples(total_samples_csv)
    jobs = []
    for key, item in data.items():
        row = Row(source, item if isinstance(item, dict) else {}, item=str(key))
        jobs.append(_job(row, f"job-{key}", isolated, totals, (nodes, gpus_per_node), gpu_type))
    return Trace(
        name=f"deepshare-{source.stem.removeprefix('deepshare_')}",
        jobs=tuple(jobs),
        cluster=single_type_cluster(nodes, gpus_per_node, gpu_type),
        contention=read_contention_csv(contention_csv) if contention_csv is not None else None,
        source=str(source),
    )


def _job(
    row: Row,
    job_id: str,
    isolated: dict[Config, float],
    totals: dict[tuple[str, int], float],
    shape: tuple[int, int],
    gpu_type: str,
) -> TraceJob:
    nodes, gpus_per_node = shape
    model = row.text("model")
    demand = row.integer("gpu_demand", minimum=1)
    if demand > nodes * gpus_per_node:
        raise row.error(f"gpu_demand {demand} exceeds the cluster's {nodes * gpus_per_node} GPUs")
    spread = {
        n: rate
        for (m, gpus, n), rate in sorted(isolated.items())
        if m == model and gpus == demand and n <= nodes and gpus <= n * gpus_per_node
    }
    if not spread:
        raise row.error(
            f"no isolated throughput for {model!r} on {demand} GPUs that fits "
            f"{nodes} nodes of {gpus_per_node} GPUs"
        )
    if "total_samples_to_train" in row.fields:
        samples = row.number("total_samples_to_train", strict=True)
    elif (model, demand) in totals:
        samples = totals[(model, demand)]
    else:
        raise row.error(f"no total_samples_to_train, and none for {model!r} × {demand} GPUs")
    return TraceJob(
        id=job_id,
        arrival=0.0,
        scale_factor=demand,
        total_steps=samples,
        throughput={gpu_type: sum(spread.values()) / len(spread)},
        workload_class=model,
        placement_throughput=spread,
    )


def _demand(row: Row, column: str) -> int:
    if not column.isdigit() or int(column) < 1:
        raise row.error(f"column {column!r} is not a GPU demand")
    return int(column)
