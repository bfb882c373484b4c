"""Sia's (SOSP'23) simulator data: measured step times of five models on three GPU types, the
statistical-efficiency curves of the Pollux (OSDI'21) traces, the job workloads, and the default
heterogeneous cluster (files under `source/sia/`, see its README).

- `profile(model, gpu)`: the `placements-<gpu>.csv` rows (placement digits: GPUs per node, local
  batch, step and sync time in seconds) and the `scalability-<gpu>.csv` rows (nodes, replicas,
  local batch, step and sync time);
- `curves(model)`: per global batch size M of `validation-M.csv`, one row per epoch: cumulative
  progress (optimizer steps at the smallest batch M0), steps taken at M, the metric and the
  gradient statistics |g|² (`grad_sqr`) and tr Σ (`grad_var`) measured at M0;
- `application(model)`: the constants Sia's simulator sets per model (batch limits, epochs,
  restart times, its calibration slowdown);
- `read_workload(path)`, `workload(family, number)`: job arrivals (`name, time, application,
  num_replicas, batch_size`); `scale_workload(k)`: Saturn workload 1 with every job issued k
  times (Sia's `scale_kx` runtime workloads for a k × 64-GPU cluster);
- `SIA_CLUSTER`: 6 × 4 T4, 2 × 8 A100, 3 × 8 RTX 2080Ti (64 GPUs).

GPU types are named by their GPU (`t4`, `a100`, `rtx2080ti`); `PROFILE_SUFFIX` maps each to the
file suffix of Sia's profiles (`aws`, `dgx-ext`, `rtx`).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from apportion.refdata import SOURCE
from apportion.solver.arraytypes import FloatArray, IntArray

DATA = SOURCE / "sia"
MODELS = ("bert", "cifar10", "deepspeech2", "imagenet", "yolov3")
PROFILE_SUFFIX = {"t4": "aws", "a100": "dgx-ext", "rtx2080ti": "rtx"}
GPU_TYPES = tuple(PROFILE_SUFFIX)
WORKLOAD_FAMILIES = ("saturn", "philly")


@dataclass(frozen=True)
class ClusterSpec:
    """Nodes per GPU type, GPUs per node, and how many nodes a job may span (the profiled
    ones: a configuration over more nodes than were measured is not offered)."""

    nodes: dict[str, int]
    gpus_per_node: dict[str, int]
    max_nodes: dict[str, int]

    @property
    def gpus(self) -> dict[str, int]:
        return {k: self.nodes[k] * self.gpus_per_node[k] for k in self.nodes}

    def scaled(self, factor: int) -> ClusterSpec:
        """`factor` times the nodes of every type (Sia's `--cluster_scale`)."""
        return ClusterSpec(
            {k: n * factor for k, n in self.nodes.items()}, self.gpus_per_node, self.max_nodes
        )


SIA_CLUSTER = ClusterSpec(
    nodes={"t4": 6, "a100": 2, "rtx2080ti": 3},
    gpus_per_node={"t4": 4, "a100": 8, "rtx2080ti": 8},
    max_nodes={"t4": 16, "a100": 2, "rtx2080ti": 3},
)


@dataclass(frozen=True)
class Profile:
    """One model's measured step times on one GPU type."""

    placement: list[str]  # digits: GPUs on each node ("22" = 2 nodes × 2 GPUs)
    nodes: IntArray
    replicas: IntArray
    local_batch: FloatArray
    step_time: FloatArray
    sync_time: FloatArray
    # scalability-<gpu>.csv: (nodes, replicas, local batch) → step and sync time
    scale_nodes: IntArray
    scale_replicas: IntArray
    scale_local_batch: FloatArray
    scale_step_time: FloatArray
    scale_sync_time: FloatArray

    @property
    def min_local_batch(self) -> int:
        return int(self.local_batch.min())

    @property
    def max_local_batch(self) -> int:
        return int(self.local_batch.max())

    def single_gpu_throughput(self) -> float:
        """Largest 1-GPU local batch ÷ largest 1-GPU step time: the samples/s Sia uses to
        project a job's goodput onto a GPU type it has not run on."""
        one = self.replicas == 1
        return float(self.local_batch[one].max() / self.step_time[one].max())


@dataclass(frozen=True)
class Curve:
    """A real training run at global batch size `batch`: one row per epoch."""

    batch: int
    progress: FloatArray
    iteration: FloatArray
    metric: FloatArray
    grad_sqr: FloatArray
    grad_var: FloatArray


@dataclass(frozen=True)
class Application:
    """What Sia's simulator knows of a model (its `applications.py` and `simulator_config.py`
    constants, with every limit read from the data as the simulator does)."""

    name: str
    init_batch: int  # M0, the smallest curve
    max_batch: int  # M_max, the largest curve
    epochs: int  # E_max: the job completes after this many epochs of statistical progress
    restart_seconds: float  # D: a new placement holds its GPUs this long without progress
    restart_factor_seconds: float  # S: the policy's re-allocation factor uses it
    slowdown: float  # the simulator's calibration: true progress rate ÷ this
    profiles: dict[str, Profile]
    curves: tuple[Curve, ...]

    def min_local_batch(self, gpu: str) -> int:
        return self.profiles[gpu].min_local_batch

    def max_local_batch(self, gpu: str) -> int:
        """The largest profiled local batch; deepspeech2 on RTX 2080Ti is capped at 57 in
        Sia's code (its memory), not by the profile (80)."""
        if self.name == "deepspeech2" and gpu == "rtx2080ti":
            return 57
        return self.profiles[gpu].max_local_batch

    def epoch_targets(self) -> FloatArray:
        """P_e for e = 0 … E_max: progress at the end of epoch e, the least over the curves
        (P_0 = 0). The job is done at P_{E_max}."""
        rows = np.vstack([c.progress[: self.epochs] for c in self.curves])
        return np.concatenate([[0.0], rows.min(axis=0)])

    def target(self) -> float:
        return float(self.epoch_targets()[-1])


#: Checkpoint-restore seconds measured by Sia (D) and the re-allocation factor's S per model.
RESTART_SECONDS = {
    "bert": 120.0,
    "cifar10": 50.0,
    "deepspeech2": 25.0,
    "imagenet": 250.0,
    "yolov3": 80.0,
}
RESTART_FACTOR_SECONDS = {
    "bert": 120.0,
    "cifar10": 30.0,
    "deepspeech2": 25.0,
    "imagenet": 250.0,
    "yolov3": 45.0,
}
SLOWDOWN = {"bert": 1.2, "cifar10": 1.8, "deepspeech2": 1.2, "imagenet": 1.2, "yolov3": 1.2}
EPOCHS = {"bert": 2, "cifar10": 100, "deepspeech2": 80, "imagenet": 90, "yolov3": 50}


def _rows(path: Path) -> tuple[list[str], list[list[str]]]:
    with path.open(newline="") as handle:
        reader = csv.reader(handle)
        header = [h.strip() for h in next(reader)]
        return header, [row for row in reader if row]


def _columns(path: Path) -> dict[str, list[str]]:
    header, rows = _rows(path)
    return {name: [row[i] for row in rows] for i, name in enumerate(header)}


def _floats(values: list[str]) -> FloatArray:
    return np.array(values, dtype=float)


@cache
def profile(model: str, gpu: str) -> Profile:
    """The measured step times of `model` on GPU type `gpu` (a key of `PROFILE_SUFFIX`)."""
    folder = DATA / "throughput_profiles" / model
    suffix = PROFILE_SUFFIX[gpu]
    placed = _columns(folder / f"placements-{suffix}.csv")
    scale = _columns(folder / f"scalability-{suffix}.csv")
    digits = [p.strip() for p in placed["placement"]]
    return Profile(
        placement=digits,
        nodes=np.array([len(d) for d in digits], dtype=np.int64),
        replicas=np.array([sum(map(int, d)) for d in digits], dtype=np.int64),
        local_batch=_floats(placed["local_bsz"]),
        step_time=_floats(placed["step_time"]),
        sync_time=_floats(placed["sync_time"]),
        scale_nodes=_floats(scale["num_nodes"]).astype(np.int64),
        scale_replicas=_floats(scale["num_replicas"]).astype(np.int64),
        scale_local_batch=_floats(scale["local_bsz"]),
        scale_step_time=_floats(scale["step_time"]),
        scale_sync_time=_floats(scale["sync_time"]),
    )


@cache
def curves(model: str) -> tuple[Curve, ...]:
    """The model's training runs, by increasing batch size."""
    found = []
    for path in (DATA / "applications" / model).glob("validation-*.csv"):
        batch = int(path.stem.split("-")[-1])
        col = _columns(path)
        found.append(
            Curve(
                batch,
                _floats(col["progress"]),
                _floats(col["iteration"]),
                _floats(col["metric"]),
                _floats(col["grad_sqr"]),
                _floats(col["grad_var"]),
            )
        )
    if not found:
        raise FileNotFoundError(f"no validation curves for model {model!r} under {DATA}")
    return tuple(sorted(found, key=lambda c: c.batch))


@cache
def application(model: str) -> Application:
    """`model` as Sia's simulator sets it up (every GPU type of `GPU_TYPES`)."""
    if model not in MODELS:
        raise KeyError(f"unknown model {model!r}; Sia's data has {', '.join(MODELS)}")
    runs = curves(model)
    return Application(
        name=model,
        init_batch=runs[0].batch,
        max_batch=runs[-1].batch,
        epochs=EPOCHS[model],
        restart_seconds=RESTART_SECONDS[model],
        restart_factor_seconds=RESTART_FACTOR_SECONDS[model],
        slowdown=SLOWDOWN[model],
        profiles={gpu: profile(model, gpu) for gpu in GPU_TYPES},
        curves=runs,
    )


@dataclass(frozen=True)
class WorkloadJob:
    name: str
    time: float  # submission, seconds from the trace's start
    application: str
    num_replicas: int  # GPUs a rigid scheduler gives it
    batch_size: int  # the global batch a rigid job trains at


def read_workload(path: str | Path) -> list[WorkloadJob]:
    """A Sia workload CSV, in file order."""
    header, rows = _rows(Path(path))
    expected = ["name", "time", "application", "num_replicas", "batch_size"]
    if header[:5] != expected:
        raise ValueError(f"{path}: expected columns {expected}, got {header}")
    jobs = []
    for line, row in enumerate(rows, start=2):
        app = row[2].strip()
        if app not in MODELS:
            raise ValueError(f"{path}, line {line}: unknown application {app!r}")
        jobs.append(WorkloadJob(row[0].strip(), float(row[1]), app, int(row[3]), int(row[4])))
    return jobs


def workload_path(family: str, number: int, rate: int | None = None) -> Path:
    """`saturn` 1–10, `philly` 1–8, or `rate` (jobs per hour, 10–50) with workloads 1–3."""
    if rate is not None:
        return DATA / "workloads" / "scale" / f"rate_{rate}" / f"workload-{number}.csv"
    if family not in WORKLOAD_FAMILIES:
        raise KeyError(f"unknown workload family {family!r}; use {', '.join(WORKLOAD_FAMILIES)}")
    return DATA / "workloads" / family / f"workload-{number}.csv"


def workload(family: str, number: int = 1, rate: int | None = None) -> list[WorkloadJob]:
    return read_workload(workload_path(family, number, rate))


def scale_workload(factor: int) -> list[WorkloadJob]:
    """Saturn workload 1 with each job issued `factor` times at its own submission time (Sia's
    `scale_<factor>x/workload-1.csv`, for a cluster `factor` times the default)."""
    out = []
    for job in workload("saturn", 1):
        for copy in range(factor):
            name = job.name if copy == 0 else f"{job.name}.{copy}"
            out.append(
                WorkloadJob(name, job.time, job.application, job.num_replicas, job.batch_size)
            )
    return out
