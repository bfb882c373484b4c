"""DeepShare's profiled contention data (Ryu & Eo, ICPADS'23) as apportion inputs.

The published `shared_thp_ratio.csv` is a 36 × 36 matrix over job configurations keyed
`"<model>,<total GPUs>,<nodes>"` (e.g. `"FSDP,8,2"`); entry [row = target, column = co-runner] is
the target's throughput next to the co-runner divided by its isolated throughput, so
CS = 1 / entry (entries are clipped at 1, CS ≥ 1). The derived long form (`target_model, ...,
shared_thp_ratio, contention_sensitivity, ...`) is read as well. Model names are kept as published
(`GraphSage`, `MobileNetV3`, `DLRM`, `Transformer-XL`, `FSDP`, `MoE`); `PAPER_NAMES` maps them to
the paper's abbreviations.

Convert a CSV into the snapshot's `contention` field:

    python -m refdata.deepshare shared_thp_ratio.csv > contention.json
"""

from __future__ import annotations

import csv
import io
import json
import random
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from apportion.solver.errors import InputError
from apportion.solver.snapshot.contention import ContentionEntry, ContentionTable, JobConfig

PAPER_NAMES = {
    "GraphSage": "GNN",
    "MobileNetV3": "IMG",
    "DLRM": "DLRM",
    "Transformer-XL": "LM",
    "FSDP": "FSDP",
    "MoE": "MoE",
}

#: DeepShare's placement rule without single-node placements (its LAS/SRTF baselines):
#: demand → [(nodes, GPUs per node)].
DEEPSHARE_SHAPES: dict[int, list[tuple[int, int]]] = {
    2: [(2, 1)],
    4: [(2, 2), (4, 1)],
    8: [(2, 4), (4, 2)],
}

_LONG_HEADER = "target_model"


def read_contention_csv(
    source: str | Path, rename: Mapping[str, str] | None = None
) -> ContentionTable:
    """The contention table in a DeepShare CSV (matrix or long form); `rename` maps models."""
    path = Path(source)
    try:
        text = path.read_text(encoding="utf-8-sig")
        rows = [row for row in csv.reader(io.StringIO(text)) if row]
    except OSError as exc:
        raise InputError.single(
            ("contention_csv",), f"cannot read {path}: {exc.strerror or exc}"
        ) from None
    except (UnicodeDecodeError, csv.Error) as exc:
        raise InputError.single(("contention_csv",), f"{path} is not a CSV file: {exc}") from None
    if not rows:
        raise InputError.single(("contention_csv",), f"{path} is empty")
    try:
        if rows[0][0].strip() == _LONG_HEADER:
            entries = list(_long_entries(rows))
        else:
            entries = list(_matrix_entries(rows))
    except (ValueError, IndexError, KeyError) as exc:
        raise InputError.single(("contention_csv",), f"{path}: {exc}") from None
    names = dict(rename or {})
    return ContentionTable(entries=[_renamed(e, names) for e in entries])


def parse_config(key: str) -> JobConfig:
    """`"FSDP,8,2"` → JobConfig(FSDP, 8 GPUs, 2 nodes)."""
    parts = [part.strip() for part in key.rsplit(",", 2)]
    if len(parts) != 3 or not parts[1].isdigit() or not parts[2].isdigit():
        raise ValueError(f"configuration key {key!r} is not '<model>,<total GPUs>,<nodes>'")
    return JobConfig(workload_class=parts[0], gpus=int(parts[1]), nodes=int(parts[2]))


def _sensitivity(ratio: str, where: str) -> float:
    value = float(ratio)
    if not value > 0:
        raise ValueError(f"{where}: throughput ratio {ratio!r} must be positive")
    # Ratios above 1 are measurement noise (a co-runner does not speed a job up).
    return max(1.0, 1.0 / value)


def _matrix_entries(rows: list[list[str]]) -> Iterable[ContentionEntry]:
    columns = [parse_config(key) for key in rows[0][1:]]
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != len(columns) + 1:
            raise ValueError(f"line {line} has {len(row) - 1} values, expected {len(columns)}")
        target = parse_config(row[0])
        for co_runner, ratio in zip(columns, row[1:], strict=True):
            cs = _sensitivity(ratio, f"line {line}, column {co_runner}")
            yield ContentionEntry(target=target, co_runner=co_runner, cs=cs)


def _long_entries(rows: list[list[str]]) -> Iterable[ContentionEntry]:
    header = [h.strip() for h in rows[0]]
    col = {name: i for i, name in enumerate(header)}
    for line, row in enumerate(rows[1:], start=2):

        def config(side: str, r: list[str] = row) -> JobConfig:
            return JobConfig(
                workload_class=r[col[f"{side}_model"]],
                gpus=int(r[col[f"{side}_total_gpus"]]),
                nodes=int(r[col[f"{side}_num_nodes"]]),
            )

        cs = _sensitivity(row[col["shared_thp_ratio"]], f"line {line}")
        yield ContentionEntry(target=config("target"), co_runner=config("colocated"), cs=cs)


def _renamed(entry: ContentionEntry, names: dict[str, str]) -> ContentionEntry:
    if not names:
        return entry

    def cfg(c: JobConfig) -> JobConfig:
        return c.model_copy(
            update={"workload_class": names.get(c.workload_class, c.workload_class)}
        )

    return entry.model_copy(update={"target": cfg(entry.target), "co_runner": cfg(entry.co_runner)})


def read_trace(path: str | Path) -> list[dict[str, Any]]:
    """A DeepShare trace in queue order: [{"id", "model", "gpu_demand", ...}]."""
    data = json.loads(Path(path).read_text())
    return [{"id": f"job-{key}", **value} for key, value in data.items()]


def trace_snapshot(
    trace: list[dict[str, Any]],
    *,
    nodes: int = 4,
    gpus_per_node: int = 8,
    running: int = 8,
    candidates: int = 6,
    seed: int = 0,
) -> dict[str, Any]:
    """A placement snapshot from a trace: up to `running` jobs from the queue head run (placed at
    random with DeepShare's shapes, until one does not fit), the next `candidates` jobs wait."""
    rng = random.Random(seed)
    free = {f"node-{n}": gpus_per_node for n in range(nodes)}
    jobs: list[dict[str, Any]] = []
    position = 0
    while position < len(trace) and len(jobs) < running:
        job = trace[position]
        position += 1
        placement = _random_placement(job["gpu_demand"], free, rng)
        if placement is None:
            position -= 1  # the cluster is full for it: it heads the waiting queue
            break
        for node, gpus in placement.items():
            free[node] -= gpus
        jobs.append({"id": job["id"], "workload_class": job["model"], "placement": placement})
    for job in trace[position : position + candidates]:
        jobs.append(
            {"id": job["id"], "workload_class": job["model"], "scale_factor": job["gpu_demand"]}
        )
    return {
        "policy": "contention_placement",
        "nodes": [{"id": node, "gpus": gpus_per_node} for node in free],
        "jobs": jobs,
    }


def _random_placement(
    demand: int, free: dict[str, int], rng: random.Random
) -> dict[str, int] | None:
    shapes = DEEPSHARE_SHAPES.get(demand, [])
    for k, per_node in rng.sample(shapes, len(shapes)):
        fits = [node for node, g in free.items() if g >= per_node]
        if len(fits) >= k:
            return dict.fromkeys(rng.sample(fits, k), per_node)
    return None


def main(argv: list[str] | None = None) -> None:
    """Print the contention table of a DeepShare CSV as JSON (the snapshot's `contention`)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.stderr.write("usage: python -m refdata.deepshare FILE.csv\n")
        raise SystemExit(2)
    try:
        table = read_contention_csv(args[0])
    except InputError as exc:
        sys.stderr.write(f"error: {exc.one_line()}\n")
        raise SystemExit(2) from None
    sys.stdout.write(table.model_dump_json(indent=1) + "\n")


if __name__ == "__main__":
    main()
