"""What a simulation replays: jobs arriving over time on a cluster.

Every reader (`simulator.traces`) produces a `Trace`; the engine reads nothing else. Times are
seconds from the trace's start; throughputs are steps per second of the whole job at its scale
factor on each GPU type (0 or missing: cannot run there), as in a snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from apportion.solver.snapshot.contention import ContentionTable


@dataclass(frozen=True)
class Deadline:
    """Finish by `time` (seconds from the trace's start) and earn `value`."""

    time: float
    value: float = 1.0


@dataclass(frozen=True)
class TraceJob:
    id: str
    arrival: float  # seconds from the trace's start
    scale_factor: int  # GPUs the job holds at once (gang)
    total_steps: float  # work to do, in steps
    throughput: dict[str, float]  # steps/s of the whole job per GPU type
    weight: float = 1.0
    workload_class: str | None = None  # e.g. Gavel's job type, DeepShare's model, Chronus's model
    entity: str | None = None  # owner, for hierarchical policies
    deadlines: tuple[Deadline, ...] = ()  # SLO jobs; empty for best-effort jobs
    job_class: str | None = None  # strict / soft / best_effort (deadline traces)
    # Co-located throughputs for space sharing: other job's workload class → per GPU type
    # (this job's steps/s, the other's steps/s). Empty when the trace has none.
    pairs: dict[str, dict[str, tuple[float, float]]] = field(default_factory=dict)
    # Steps/s of the whole job by the number of nodes it spans, when placement changes it
    # (DeepShare: the isolated throughput of each configuration). Empty: placement does not
    # change the throughput, `throughput` holds.
    placement_throughput: dict[int, float] = field(default_factory=dict)
    # Seconds a restart costs this job (its checkpoint-restore time, Sia's traces); None: the
    # simulation's `preemption_seconds`.
    restart_seconds: float | None = None


@dataclass(frozen=True)
class Node:
    id: str
    gpus: int
    gpu_type: str


@dataclass(frozen=True)
class Cluster:
    """GPU types and counts, and the nodes holding them (a node holds one type)."""

    nodes: tuple[Node, ...]

    @property
    def gpu_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for node in self.nodes:
            counts[node.gpu_type] = counts.get(node.gpu_type, 0) + node.gpus
        return counts

    @classmethod
    def uniform(cls, per_type: dict[str, int], gpus_per_node: int) -> Cluster:
        """`per_type[k]` GPUs of type k on nodes of `gpus_per_node` (the last one smaller)."""
        nodes = []
        for name, count in per_type.items():
            full, rest = divmod(count, gpus_per_node)
            sizes = [gpus_per_node] * full + ([rest] if rest else [])
            nodes += [Node(f"{name}-{i}", size, name) for i, size in enumerate(sizes)]
        return cls(tuple(nodes))


Shape = tuple[int, int]  # (nodes spanned, GPUs on each)


@dataclass(frozen=True)
class PlacementRules:
    """What a cluster imposes on where a job runs, stated by the trace that comes from it, and
    obeyed by every policy and baseline replayed on it.

    `profiled_spans`: a job spans only node counts its trace measured a throughput for
    (`TraceJob.placement_throughput`), with equal GPUs on each node. DeepShare profiled its
    jobs on 2, 4 and 8 nodes and never on one, so a multi-GPU job there always spans nodes.
    """

    profiled_spans: bool = True

    def shapes(self, job: TraceJob, node_gpus: int) -> tuple[Shape, ...]:
        """The (nodes, GPUs per node) a job may take on nodes of `node_gpus` GPUs, fewest
        nodes first."""
        demand = job.scale_factor
        if self.profiled_spans and job.placement_throughput:
            spans = sorted(job.placement_throughput)
        else:
            spans = list(range(1, demand + 1))
        return tuple(
            (k, demand // k) for k in spans if demand % k == 0 and demand // k <= node_gpus
        )


@dataclass(frozen=True)
class Trace:
    name: str
    jobs: tuple[TraceJob, ...]  # in arrival order
    cluster: Cluster
    contention: ContentionTable | None = None  # DeepShare traces: the CS table
    source: str = ""  # where it was read from (file, generator and seed)
    # Rows a reader left out by a documented rule: reason → how many (e.g. Chronus's rows with
    # num_gpu 0). Empty when every row became a job.
    dropped: dict[str, int] = field(default_factory=dict)
    # The cluster's placement rules (DeepShare: jobs span nodes as profiled); None: a job may
    # take any placement, and the round mechanism places it.
    rules: PlacementRules | None = None
