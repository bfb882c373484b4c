"""Rebuild the bundled fixtures from the reference systems' published data.

    python -m refdata.build_fixtures DATA_DIR   # holds gavel/, chronus/ and deepshare/ as published

Writes to `refdata/source/`: `gavel_throughputs.json` (Gavel's table, isolated and co-located
throughputs for K80/P100/V100); `chronus_mix2_head200.json`: the first 200 jobs of the Chronus
artifact's Philly MIX2 trace (github.com/S-Lab-System-Group/ChronusArtifact, MIT licence, (c) 2021
S-Lab System Group); and the DeepShare contention matrix and trace. Writes to `fixtures/` the
snapshots derived from them: Gavel's physical-cluster trace, a 256-job Gavel mix, and DeepShare's 4
× 8 cluster.
"""

from __future__ import annotations

import csv
import json
import shutil
import sys
from pathlib import Path

from apportion.refdata import FIXTURES, SOURCE
from apportion.refdata.deepshare import read_trace, trace_snapshot
from apportion.refdata.gavel import GavelTable, load_published
from apportion.refdata.gavel import read_trace as read_gavel_trace
from apportion.refdata.synthetic import gavel_snapshot


def gavel_trace_snapshot(table: GavelTable, trace: Path) -> dict[str, object]:
    """Gavel's 96-job max-min trace on its physical cluster (8 V100, 16 P100, 24 K80)."""
    jobs = []
    for i, job in enumerate(read_gavel_trace(trace)):
        jobs.append(
            {
                "id": f"job-{i}",
                "scale_factor": job["scale_factor"],
                "weight": job["priority_weight"],
                "throughput": table.throughput((job["job_type"], job["scale_factor"])),
                "steps_remaining": job["total_steps"],
                "arrival_time": job["arrival_time"],
                "workload_class": job["job_type"],
            }
        )
    return {
        "policy": "max_min_fairness",
        "gpu_types": [
            {"name": "k80", "count": 24, "price_per_hour": 0.45},
            {"name": "p100", "count": 16, "price_per_hour": 1.46},
            {"name": "v100", "count": 8, "price_per_hour": 2.48},
        ],
        "jobs": jobs,
    }


def chronus_trace(path: Path) -> dict[str, object]:
    """The trace rows the deadline replay needs; times in minutes, deadlines relative to submit.
    Best-effort rows carry a meaningless deadline in the trace: it is dropped."""
    jobs = []
    with path.open() as f:
        for row in csv.DictReader(f):
            best_effort = row["job_type"] == "best"
            jobs.append(
                {
                    "id": f"job-{row['job_id']}",
                    "num_gpu": int(row["num_gpu"]),
                    "submit_minute": int(row["submit_time"]),
                    "duration_minutes": int(row["duration"]),
                    "deadline_minutes": []
                    if best_effort
                    else [int(t) for t in row["expect_time_list"].split("-")],
                    "values": []
                    if best_effort
                    else [float(v) for v in row["expect_value_list"].split("-")],
                    "job_class": "best_effort" if best_effort else row["job_type"],
                }
            )
    return {
        "source": "ChronusArtifact code/data trace sample_Philly_MIX2_head200.csv (MIT)",
        "jobs": jobs,
    }


def write(name: str, data: object, folder: Path = FIXTURES) -> None:
    (folder / name).write_text(json.dumps(data, indent=1) + "\n")


def main(data_dir: Path) -> None:
    table = load_published(data_dir / "gavel" / "simulation_throughputs.json", with_pairs=True)
    write("gavel_throughputs.json", table.to_compact(), SOURCE)
    write(
        "gavel_physical_96.json",
        gavel_trace_snapshot(table, data_dir / "gavel" / "traces" / "max_min_fairness.trace"),
    )
    write("gavel_mix_256.json", gavel_snapshot(256, seed=0, table=table))
    head = data_dir / "chronus" / "traces" / "sample_Philly_MIX2_head200.csv"
    (SOURCE / "chronus_mix2_head200.json").write_text(
        json.dumps(chronus_trace(head), separators=(",", ":")) + "\n"
    )
    deepshare(data_dir / "deepshare")


def deepshare(source: Path) -> None:
    """DeepShare's contention matrix and real trace, copied as published, and a 4 × 8 snapshot
    (8 jobs running from the queue head, the next 6 waiting; contention via --contention-csv)."""
    shutil.copyfile(
        source / "jobs" / "shared_thp_ratio.csv", SOURCE / "deepshare_shared_thp_ratio.csv"
    )
    shutil.copyfile(source / "traces" / "real" / "trace0.json", SOURCE / "deepshare_trace0.json")
    trace = read_trace(SOURCE / "deepshare_trace0.json")
    write("deepshare_cluster.json", trace_snapshot(trace, nodes=4, running=8, candidates=6, seed=0))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
