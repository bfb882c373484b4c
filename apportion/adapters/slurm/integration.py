"""The Slurm integration of the shared controller (`adapters.framework`): Slurm's I/O only.

How a round is enacted (Slurm 22.05, as root or SlurmUser):

- start a job: `update JobId=J Features=TYPE ReqNodeList=NODES StartTime=now` (the type
  through the node feature: changing a pending job's GPU *type* leaves it BadConstraints
  forever; the nodes so Slurm uses the GPUs the round counted free; StartTime clears the
  BeginTime a requeue sets), then `release J` when it is held (a moved job is: its stop held
  it), then `update JobId=J Priority=P`, higher for jobs the round served first;
- stop a running job: `requeuehold J` (back in the queue, held until a round runs it again;
  the requeue completes once its processes end, and only then may it be started elsewhere:
  `back_in_queue`);
- hold a pending job the round does not run: `hold J` (none when it is held already), so Slurm
  does not start it behind the round's back.

A `--gres=gpu:N` request asks for N GPUs on each of its nodes: a round that places it
otherwise cannot be enacted, and the job waits (`misfit`). Nothing is ever cancelled. A job
that reports its cumulative steps in its comment (`steps=N`) has its row learned from its
progress (`framework.learning`, docs/ESTIMATION.md).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from apportion.adapters.framework.integration import (
    Command,
    Commands,
    EnactError,
    ReadError,
    Seen,
    SetupError,
)
from apportion.adapters.framework.table import check_columns
from apportion.adapters.framework.view import Job, Managed
from apportion.adapters.slurm.managed import build_managed
from apportion.adapters.slurm.mapping import reported_steps
from apportion.adapters.slurm.scope import Scope
from apportion.adapters.slurm.slurmcli import (
    UNUSABLE_NODE_FLAGS,
    USABLE_NODE_STATES,
    Slurm,
    SlurmError,
    SlurmJob,
    SlurmNode,
    unsupported,
    without_type_feature,
)
from apportion.solver.errors import InputError

#: Priority given to the first job a round starts; later ones get one less each.
PRIORITY_TOP = 100_000


@dataclass(frozen=True)
class SlurmState:
    """One reading of the cluster: `sinfo --json` and `squeue --json`."""

    nodes: list[SlurmNode]
    jobs: list[SlurmJob]


class SlurmIntegration:
    """Slurm for the shared controller: reads with `sinfo`/`squeue`, acts with `scontrol`."""

    name = "slurm"

    def __init__(
        self,
        slurm: Slurm,
        table: Mapping[str, Mapping[str, float]],
        scope: Scope | None = None,
    ) -> None:
        self.slurm, self.table, self.scope = slurm, table, scope or Scope()

    def read(self) -> SlurmState:
        """Slurm's state; `ReadError` also while a node in scope has not registered with a
        slurmctld that just (re)started: its jobs' GPUs are not known yet, and a job started
        there comes up without them."""
        try:
            state = SlurmState(self.slurm.nodes(), self.slurm.jobs())
        except SlurmError as exc:
            raise ReadError(str(exc)) from None
        # A node drained, down or reserved is left out anyway; one merely not responding yet
        # is on its way back.
        put_aside = UNUSABLE_NODE_FLAGS - {"NOT_RESPONDING"}
        waking = [
            n.name
            for n in state.nodes
            if n.gpu_type
            and not n.registered
            and self.scope.schedules(n)
            and n.state.lower() in USABLE_NODE_STATES | {"unknown"}
            and not n.flags & put_aside
        ]
        if waking:
            raise ReadError(
                f"node(s) {', '.join(waking)} have not registered with slurmctld since it "
                "started (a restart?): nothing is changed before they have"
            )
        return state

    def seen(self, state: SlurmState) -> Iterable[Seen]:
        return [Seen(j.id, j.running_type if j.running else None, j.start_time) for j in state.jobs]

    def managed(self, state: SlurmState) -> Managed[SlurmJob]:
        return build_managed(state.nodes, state.jobs, self.table, self.scope)

    def start(
        self, job: Job[SlurmJob], gpu_type: str, placement: Mapping[str, int], rank: int
    ) -> Commands:
        update = ("scontrol", "update", f"JobId={job.id}")
        nodes = ",".join(placement)
        commands: list[Command] = [
            (*update, f"Features={gpu_type}", f"ReqNodeList={nodes}", "StartTime=now")
        ]
        if job.source.held or job.running:
            commands.append(("scontrol", "release", job.id))
        commands.append((*update, f"Priority={PRIORITY_TOP - rank}"))
        return tuple(commands)

    def stop(self, job: Job[SlurmJob]) -> Commands:
        return (("scontrol", "requeuehold", job.id),)

    def hold(self, job: Job[SlurmJob]) -> Commands:
        return () if job.source.held else (("scontrol", "hold", job.id),)

    def enact(self, command: Command) -> None:
        try:
            self.slurm.run(command)
        except SlurmError as exc:
            raise EnactError(str(exc)) from None

    def show(self, command: Command) -> str:
        return shlex.join(command)

    # Capabilities the controller checks for.

    def misfit(self, job: Job[SlurmJob], placement: Mapping[str, int]) -> str | None:
        source = job.source
        if not source.per_node:
            return None
        each = source.gpus // max(source.node_count, 1)
        if len(placement) == source.node_count and all(g == each for g in placement.values()):
            return None
        return f"it asks for {each} GPUs on each of {source.node_count} node(s)"

    def progress(self, job: Job[SlurmJob]) -> float | None:
        """The cumulative steps the job reports in its comment (`steps=N`), or None."""
        return reported_steps(job.source.comment)

    def reference(self) -> Mapping[str, Mapping[str, float]]:
        return self.table

    def identity(self) -> str:
        """The cluster (its name and controller) and the scope: one adapter each."""
        try:
            config = self.slurm.config()
        except SlurmError as exc:
            raise SetupError(f"cannot read the cluster's configuration: {exc}") from None
        host = config.get("SlurmctldHost[0]", config.get("SlurmctldHost", "?"))
        where = f"{config.get('ClusterName', '?')} at {host}:{config.get('SlurmctldPort', '?')}"
        return f"slurm cluster {where}; {self.scope.describe()}"

    def back_in_queue(self, jobs: set[str]) -> set[str]:
        try:
            return {j.id for j in self.slurm.jobs() if j.id in jobs and j.pending}
        except SlurmError as exc:
            raise ReadError(str(exc)) from None

    def check(self) -> None:
        """The Slurm release, typed GPUs with a feature per type on the scheduled nodes, and a
        table whose columns are the cluster's types."""
        try:
            problem = unsupported(self.slurm.version())
            if problem is not None:
                raise SetupError(problem)
            nodes = self.slurm.nodes()
        except SlurmError as exc:
            raise SetupError(f"cannot read the cluster: {exc}") from None
        scheduled = [n for n in nodes if self.scope.schedules(n)]
        types = {n.gpu_type for n in scheduled if n.gpu_type}
        if not types:
            where = f" in {self.scope.describe()}" if self.scope.partitions else ""
            raise SetupError(f"the cluster has no typed GPUs{where} (node Gres=gpu:TYPE:N)")
        lacking = without_type_feature(scheduled)
        if lacking:
            node, kind = next(iter(lacking.items()))
            raise SetupError(
                f"node {node} has {kind} GPUs but no feature {kind!r}: the adapter steers GPU "
                f"types through node features (slurm.conf Feature={kind}; {len(lacking)} "
                "node(s) lack one)"
            )
        try:
            check_columns(self.table, {n.gpu_type for n in nodes if n.gpu_type})
        except InputError as exc:
            raise SetupError(exc.one_line()) from None
