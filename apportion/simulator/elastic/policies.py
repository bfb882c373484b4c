"""Deciders of the elastic simulation that ask one of apportion's elastic policies (`sia`,
`ones`, `elastic_max_goodput`): each round a snapshot of the active jobs with the configurations
Sia's scheduler would offer them (`belief`), solved in process, enacted on nodes by
`layout` (as Sia's simulator lays them out, afresh each round: the default) or
`mechanism.elastic` (jobs kept on their nodes: `layout="keep"`). A solve that gives no usable
answer leaves every job where it is. A job that has not run is worth 1 on one GPU of any type
(Sia's default), or its single-GPU throughput on each type with `known_start`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from apportion.mechanism.elastic import Want, place
from apportion.refdata.sia import ClusterSpec
from apportion.simulator.elastic.belief import Shape, cluster_shapes, job_document, offer
from apportion.simulator.elastic.engine import Decision, node_list
from apportion.simulator.elastic.jobs import ElasticJob
from apportion.simulator.elastic.layout import sia_layout

if TYPE_CHECKING:
    from apportion.solver.result import SolveResult

USABLE = frozenset({"optimal", "feasible"})
#: Per job name, the (shape, configuration) pairs it was offered.
Offers = dict[str, list[tuple[Shape, dict[str, Any]]]]
#: How chosen configurations land on nodes: Sia's simulator's layout, or jobs kept in place.
LAYOUTS = ("sia", "keep")
#: Options that make a policy decide as its authors' scheduler does (caller's options win):
#: Sia's policy rounds A = Ĝ^p to two decimals before it solves.
AUTHORS_RULES: dict[str, dict[str, Any]] = {"sia": {"round_decimals": 2}}


class ApportionElastic:
    """An apportion policy over the configurations Sia offers each job."""

    def __init__(
        self,
        policy: str,
        cluster: ClusterSpec,
        options: Mapping[str, Any] | None = None,
        layout: str = "sia",
        known_start: bool = False,
    ):
        if layout not in LAYOUTS:
            raise ValueError(f"layout {layout!r}: choose one of {', '.join(LAYOUTS)}")
        self.name = policy
        self.layout = layout
        # a new job's single-GPU throughputs known before it first runs (`belief.first_run`)
        self.known_start = known_start
        self.chosen: dict[str, Shape] = {}  # the configuration each job was given last
        self.policy = policy
        # Counted work, not the wall clock, bounds each call, on one solver thread: a run is a
        # function of its inputs (`simulator.enact.policy_options`).
        self.options = {
            "clock": "work",
            "threads": 1,
            **AUTHORS_RULES.get(policy, {}),
            **(options or {}),
        }
        self.cluster = cluster
        self.shapes = cluster_shapes(cluster)
        self.nodes = node_list(cluster)
        self.gpu_types = [{"name": k, "count": n} for k, n in cluster.gpus.items()]
        self.solver_seconds: list[float] = []

    def ask(
        self, now: float, active: list[ElasticJob]
    ) -> tuple[SolveResult | None, Offers, Decision]:
        """The policy's answer on the configurations Sia would offer each active job (None when
        it is not usable), those offers, and where the jobs run now."""
        from apportion.solver.pipeline import solve

        offers = {
            job.name: offer(job, self.shapes, self.cluster, self.known_start) for job in active
        }
        snapshot = {
            "gpu_types": self.gpu_types,
            "jobs": [
                job_document(job, now, offers[job.name], self.chosen.get(job.name))
                for job in active
            ],
        }
        result = solve(snapshot, policy=self.policy, options=self.options)
        self.solver_seconds.append(result.solver.total_seconds)
        held = {job.name: job.nodes for job in active if job.nodes}
        return (result if result.status.value in USABLE else None), offers, held

    def decide(self, now: float, active: list[ElasticJob]) -> Decision:
        result, offers, held = self.ask(now, active)
        if result is None:
            return held
        wanted: dict[str, Want] = {}
        for job, answer in zip(active, result.jobs, strict=True):
            label = answer.metrics.get("configuration")
            if isinstance(label, int):
                shape: Shape = offers[job.name][label][0]
                wanted[job.name] = Want(shape.gpu, shape.gpus, shape.nodes)
        return self.lay_out(wanted, held)

    def lay_out(self, wanted: dict[str, Want], held: Decision) -> Decision:
        """Nodes for the configurations `wanted` (job → configuration, in the jobs' order)."""
        self.chosen = {job: Shape(w.gpu_type, w.nodes, w.gpus) for job, w in wanted.items()}
        if self.layout == "sia":
            return sia_layout(self.nodes, wanted)
        return place(self.nodes, wanted, held).placements


class SharedElastic(ApportionElastic):
    """A policy that answers time shares over configurations (`elastic_max_min`), enacted one
    configuration per job per round by deficit: each job accrues its share of every round in
    each configuration (by shape) and is charged the round it runs in one; the jobs furthest
    behind go first, each in its configuration furthest behind that still fits its type's free
    GPUs (Gavel's deficit rule over configurations). A job stays in the configuration it runs in
    while that configuration has a share (a switch costs a restart: Gavel's lease extension)."""

    def __init__(
        self,
        policy: str,
        cluster: ClusterSpec,
        options: Mapping[str, Any] | None = None,
        layout: str = "sia",
        known_start: bool = False,
    ):
        super().__init__(policy, cluster, options, layout, known_start)
        self.deficit: dict[str, dict[Shape, float]] = {}

    def decide(self, now: float, active: list[ElasticJob]) -> Decision:
        result, offers, held = self.ask(now, active)
        if result is None:
            return held
        shares = result.summary.get("configuration_shares", {})
        alive = {job.name for job in active}
        self.deficit = {name: d for name, d in self.deficit.items() if name in alive}
        given: dict[str, set[Shape]] = {}
        for job in active:
            owed = self.deficit.setdefault(job.name, {})
            for label, share in shares.get(job.name, []):
                shape = offers[job.name][int(label)][0]
                owed[shape] = owed.get(shape, 0.0) + share
                given.setdefault(job.name, set()).add(shape)
        wanted = self._choose(active, given)
        for name, want in wanted.items():
            shape = Shape(want.gpu_type, want.nodes, want.gpus)
            self.deficit[name][shape] -= 1.0
        return self.lay_out(wanted, held)

    def _choose(self, active: list[ElasticJob], given: dict[str, set[Shape]]) -> dict[str, Want]:
        free = dict(self.cluster.gpus)
        order = sorted(
            active, key=lambda j: -max(self.deficit.get(j.name, {}).values(), default=0.0)
        )
        wanted: dict[str, Want] = {}
        for job in order:
            owed = self.deficit.get(job.name, {})
            now = Shape(job.gpu, len(job.placement), job.gpus) if job.gpu else None
            staying = now is not None and now in given.get(job.name, set())
            ranked = [now] if staying else sorted(owed, key=lambda s: -owed[s])
            for shape in ranked:
                assert shape is not None
                if (staying or owed[shape] > 0) and shape.gpus <= free[shape.gpu]:
                    free[shape.gpu] -= shape.gpus
                    wanted[job.name] = Want(shape.gpu, shape.gpus, shape.nodes)
                    break
        return wanted
