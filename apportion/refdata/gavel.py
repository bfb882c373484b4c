"""Gavel's throughput table (K80/P100/V100, 26 models × scale factors) and trace files.

The published table is keyed by Python tuple reprs: `{"v100": {"('ResNet-50 (batch size 64)', 4)":
{"null": 123.4, "('LM (batch size 20)', 4)": [a, b], ...}}}`; `null` is the isolated throughput
of the whole job, a pair entry the two jobs' throughputs when co-located.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

MAIN_TYPES = ("k80", "p100", "v100")

JobType = tuple[str, int]


@dataclass(frozen=True)
class GavelTable:
    """Isolated (and optionally co-located) throughputs per job type and GPU type."""

    gpu_types: tuple[str, ...]
    job_types: tuple[JobType, ...]
    isolated: np.ndarray  # (job types, GPU types), whole-job steps/s
    pairs: dict[tuple[JobType, JobType], dict[str, tuple[float, float]]]

    def throughput(self, job_type: JobType) -> dict[str, float]:
        row = self.isolated[self.job_types.index(job_type)]
        return {g: float(v) for g, v in zip(self.gpu_types, row, strict=True) if v > 0}

    def to_compact(self) -> dict[str, Any]:
        return {
            "gpu_types": list(self.gpu_types),
            "job_types": [
                {"model": model, "scale_factor": sf, "throughput": self.throughput((model, sf))}
                for model, sf in self.job_types
            ],
            "pairs": [
                {"a": list(a), "b": list(b), "throughput": {g: list(v) for g, v in per.items()}}
                for (a, b), per in self.pairs.items()
            ],
        }

    @classmethod
    def from_compact(cls, data: dict[str, Any]) -> GavelTable:
        gpu_types = tuple(data["gpu_types"])
        job_types = tuple((e["model"], int(e["scale_factor"])) for e in data["job_types"])
        isolated = np.array(
            [[e["throughput"].get(g, 0.0) for g in gpu_types] for e in data["job_types"]]
        )
        pairs = {
            ((p["a"][0], int(p["a"][1])), (p["b"][0], int(p["b"][1]))): {
                g: (float(v[0]), float(v[1])) for g, v in p["throughput"].items()
            }
            for p in data.get("pairs", [])
        }
        return cls(gpu_types, job_types, isolated, pairs)


def load_published(path: Path, with_pairs: bool = False) -> GavelTable:
    """Parse Gavel's own JSON file (tuple-repr keys) for the three main GPU types."""
    raw = json.loads(Path(path).read_text())
    gpu_types = tuple(t for t in MAIN_TYPES if t in raw)
    job_types = tuple(_key(k) for k in raw[gpu_types[0]])
    isolated = np.array([[raw[g][repr(jt)]["null"] for g in gpu_types] for jt in job_types])
    pairs: dict[tuple[JobType, JobType], dict[str, tuple[float, float]]] = {}
    if with_pairs:
        for a in job_types:
            for other, _ in raw[gpu_types[0]][repr(a)].items():
                if other == "null":
                    continue
                b = _key(other)
                if (b, a) in pairs or a > b:
                    continue
                pairs[(a, b)] = {
                    g: (float(raw[g][repr(a)][other][0]), float(raw[g][repr(a)][other][1]))
                    for g in gpu_types
                }
    return GavelTable(gpu_types, job_types, isolated, pairs)


def _key(text: str) -> JobType:
    model, scale_factor = ast.literal_eval(text)
    return str(model), int(scale_factor)


def read_trace(path: Path) -> list[dict[str, Any]]:
    """Gavel's physical-cluster trace: 10 TAB-separated fields per job."""
    jobs = []
    for line in Path(path).read_text().splitlines():
        fields = line.split("\t")
        if len(fields) != 10:
            continue
        jobs.append(
            {
                "job_type": fields[0],
                "total_steps": float(fields[5]),
                "scale_factor": int(fields[6]),
                "priority_weight": float(fields[7]),
                "slo": float(fields[8]),
                "arrival_time": float(fields[9]),
            }
        )
    return jobs
