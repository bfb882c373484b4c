"""The Ray integration of the shared controller (`adapters.framework`): Ray's I/O and the
adapter's queue only.

How a round is enacted:

- start a job: `start J TYPE NODE:G+...`: a detached placement group named
  `apportion-<queue>-J.<start>`, one bundle per node (`GPU`, the type's and the node's resource, G
  each), and in its first bundle the actor that runs the job's entrypoint (`runner`); the
  queue records the start;
- stop a running job: `stop J`: the checkpoint contract (SIGTERM to the entrypoint, `grace`
  seconds, SIGKILL), then the group removed, which frees its GPUs; the job is queued again,
  and a later round starts it afresh (from its checkpoint);
- hold: nothing; only the adapter starts the queue's jobs.

`enact` checks a command and sends it off: the Ray calls of a round are made at once
(`inflight`), a job's in order, and `finish` (which `RayController` calls at the end of each
round) waits for them, records what they did in the queue in one transaction and names the
refused ones. Stopping jobs are all sent their checkpoint signal at once; the groups a read
settles are removed at once too.

Each read (`read`) first settles what happened since the last one, unless `settle` is off (a
dry run changes nothing): a job whose entrypoint exited is recorded done or failed and its
group removed; a group whose job was cancelled is stopped and removed; a group whose actor is
gone is removed and its job queued again; a job the queue believes running without a group is
queued again; should a job have two groups (an older start not removed), the older is stopped.
A group of the queue's name is the truth: a job found with one runs, whatever
its row says (the adapter may have died between starting it and recording so).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from contextlib import suppress
from functools import partial

import structlog

from apportion.adapters.framework.actions import nodes_text
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
from apportion.adapters.ray.inflight import Ended, InFlight
from apportion.adapters.ray.managed import RayState, build_managed
from apportion.adapters.ray.queue import JobQueue, QueuedJob
from apportion.adapters.ray.raycluster import (
    GONE,
    STARTING,
    Group,
    RayCluster,
    RayError,
    group_name,
)
from apportion.adapters.ray.scope import Scope
from apportion.solver.errors import InputError

#: Seconds a round waits for its new groups before it starts their actors regardless.
READY_WAIT = 5.0
#: What a job's actor runs: entrypoint, working directory, environment.
Launch = tuple[str, str | None, Mapping[str, str]]


class RayIntegration:
    """Ray for the shared controller: reads placement groups, acts by creating and removing
    them."""

    name = "ray"

    def __init__(
        self,
        cluster: RayCluster,
        queue: JobQueue,
        table: Mapping[str, Mapping[str, float]],
        *,
        nodes: frozenset[str] = frozenset(),
        settle: bool = True,
        ready_wait: float = READY_WAIT,
    ) -> None:
        self.cluster, self.queue, self.table = cluster, queue, table
        self.scope = Scope(queue.queue, nodes)
        self.settle = settle
        self._names: dict[str, str] = {}  # job → its group, as last read
        self._starting: set[str] = set()  # jobs whose actor did not answer the last poll
        self.calls = InFlight()
        self.ready_wait = ready_wait
        self._launch: dict[str, tuple[str, dict[str, int], Launch]] = {}  # starts to launch
        self.log = structlog.get_logger("apportion.ray")

    def read(self) -> RayState:
        self.finish()  # nothing in flight while Ray is read
        try:
            nodes, groups = self.cluster.nodes(), self.cluster.groups()
            rows = {j.id: j for j in self.queue.jobs()}
            ours, extra = self._ours(groups)
            exits = self.cluster.poll(
                g.name
                for j, g in ours.items()
                if g.state == "CREATED" and j in rows and rows[j].active
            )
            held_back = self._settle(rows, ours, exits, extra) if self.settle else {}
            if self.settle:
                rows = {j.id: j for j in self.queue.jobs()}
                groups = self.cluster.groups()
                ours, _ = self._ours(groups)
        except RayError as exc:
            raise ReadError(str(exc)) from None
        if not self.settle:  # a dry run: what the next real read settles is left alone
            held_back = _unsettled(rows, ours, exits)
        active = [j for j in rows.values() if j.active]
        running = {j: g for j, g in ours.items() if j in rows and rows[j].active}
        self._names = {j: g.name for j, g in ours.items()}
        self._starting = {j for j, g in ours.items() if exits.get(g.name) == STARTING}
        return RayState(nodes, groups, active, running, held_back)

    def seen(self, state: RayState) -> Iterable[Seen]:
        return [
            Seen(j.id, g.gpu_type, j.started or 0.0)
            if (g := state.running.get(j.id)) is not None
            else Seen(j.id)
            for j in state.jobs
        ]

    def managed(self, state: RayState) -> Managed[QueuedJob]:
        return build_managed(state, self.table, self.scope)

    def start(
        self, job: Job[QueuedJob], gpu_type: str, placement: Mapping[str, int], rank: int
    ) -> Commands:
        return (("start", job.id, gpu_type, nodes_text(placement)),)

    def stop(self, job: Job[QueuedJob]) -> Commands:
        return (("stop", job.id),)

    def hold(self, job: Job[QueuedJob]) -> Commands:
        return ()

    def enact(self, command: Command) -> None:
        """Check the command and send it off (`finish` waits for it)."""
        verb, job_id, *rest = command
        if verb == "start":
            self._start(command, job_id, rest[0], _placement(rest[1]))
        elif verb == "stop":
            name = self._names.pop(job_id, None)
            if name is None:
                raise EnactError(f"job {job_id}: Ray holds no placement group for it")
            if job_id in self._starting:  # asking whether its actor is alive takes a call
                self.calls.submit(job_id, command, partial(self.cluster.stop, name, True))
                return
            try:  # the checkpoint signal, to every job of the round at once
                reply = self.cluster.signal(name)
            except RayError as exc:
                raise EnactError(str(exc)) from None
            self.calls.submit(job_id, command, partial(self.cluster.drain, name, reply))
        else:
            raise EnactError(f"unknown command {verb!r}")

    def finish(self) -> tuple[str, ...]:
        """Wait for the commands sent off: stops and groups first, then (once Ray has created
        the groups, or after `ready_wait` seconds) the actors in them; record in the queue
        what they did (one transaction), and name the ones Ray refused (each logged)."""
        if not len(self.calls):
            return ()
        ended = self.calls.finish()
        reserved = [c for c in ended if c.error is None and c.command[0] == "start"]
        with suppress(RayError):  # not created in time: the actors wait for their groups
            self.cluster.created([self._launch[c.job][0] for c in reserved], self.ready_wait)
        for call in reserved:
            name, placement, run = self._launch.pop(call.job)
            launch = partial(self.cluster.launch, name, placement, run)
            self.calls.submit(call.job, call.command, launch)
        launched = {c.job: c.error for c in self.calls.finish()}
        self._launch.clear()
        return self._record(ended, launched)

    def _record(self, ended: list[Ended], launched: Mapping[str, str | None]) -> tuple[str, ...]:
        """What the round's commands did, in the queue (one transaction); the refused ones,
        logged."""
        refused = []
        with self.queue.batch():
            for call in ended:
                verb, job_id, *rest = call.command
                error = call.error or (launched.get(job_id) if verb == "start" else None)
                if error is not None:
                    shown = self.show(call.command)
                    self.log.error("command_failed", job=job_id, command=shown, error=error)
                    refused.append(shown)
                    if verb == "start":
                        self._names.pop(job_id, None)
                elif verb == "start":
                    self.queue.started(job_id, rest[0], _placement(rest[1]))
                else:
                    self.queue.requeued(job_id)
        return tuple(refused)

    def show(self, command: Command) -> str:
        return " ".join(command)

    def check(self) -> None:
        """Ray reachable, nodes in scope with a name and a GPU type, no name declared twice,
        and a table whose columns are the cluster's types."""
        try:
            nodes = self.cluster.nodes()
        except RayError as exc:
            raise SetupError(str(exc)) from None
        for node in nodes:
            if node.alive and node.problem is not None:
                raise SetupError(f"Ray node {node.node_id[:12]} {node.problem}")
        named = [n for n in nodes if n.alive and n.name is not None]
        names = [str(n.name) for n in named]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise SetupError(f"node name(s) {', '.join(twice)} declared twice")
        scheduled = [n for n in nodes if self.scope.schedules(n)]
        if not scheduled:
            raise SetupError(
                f"no Ray node in scope declares a GPU type and a name "
                f'(ray start --num-gpus N --resources \'{{"apportion_gpu_TYPE": N, '
                f'"apportion_node_NAME": N}}\'); scope: {self.scope.describe()}'
            )
        try:
            check_columns(self.table, {str(n.gpu_type) for n in named if n.gpu_type})
        except InputError as exc:
            raise SetupError(exc.one_line()) from None

    def close(self) -> None:
        self.finish()
        self.calls.close()
        self.queue.close()
        self.cluster.close()

    def _start(
        self, command: Command, job_id: str, gpu_type: str, placement: dict[str, int]
    ) -> None:
        job = self.queue.get(job_id)
        if not job.active:
            raise EnactError(f"job {job_id} is {job.state}")
        if job_id in self._names:
            raise EnactError(f"job {job_id} runs already ({self._names[job_id]})")
        name = group_name(self.queue.queue, job_id, job.starts + 1)
        env = {
            "APPORTION_JOB_ID": job_id,
            "APPORTION_GPU_TYPE": gpu_type,
            "APPORTION_PLACEMENT": nodes_text(placement),
            "APPORTION_PLACEMENT_GROUP": name,
            "APPORTION_START": str(job.starts + 1),
        }
        self._names[job_id] = name
        self._launch[job_id] = (name, placement, (job.entrypoint, job.cwd, env))
        self.calls.submit(job_id, command, partial(self.cluster.reserve, name, gpu_type, placement))

    def _ours(self, groups: Iterable[Group]) -> tuple[dict[str, Group], list[Group]]:
        """The queue's groups by job (its latest start), and any older one a job still has."""
        ours: dict[str, Group] = {}
        extra: list[Group] = []
        for group in sorted(groups, key=lambda g: _start(g.name)):
            job = self.scope.owns(group.name)
            if job is not None:
                if job in ours:
                    extra.append(ours[job])
                ours[job] = group
        return ours, extra

    def _settle(
        self,
        rows: Mapping[str, QueuedJob],
        ours: Mapping[str, Group],
        exits: Mapping[str, object],
        extra: Iterable[Group],
    ) -> dict[str, str]:
        """Bring the queue and Ray in line (see the module's docstring); jobs whose group
        could not be removed, with the reason (left alone this round)."""
        for group in extra:  # never two starts of a job at once: the older one goes
            self.calls.submit(
                group.name, ("older", group.name), partial(self.cluster.stop, group.name)
            )
        for job_id, group in ours.items():  # the removals at once (stops: their grace together)
            row, code = rows.get(job_id), exits.get(group.name)
            if row is None or not row.active:
                why = ("stopped", job_id, f"the job is {_state(row)}")
                self.calls.submit(job_id, why, partial(self.cluster.stop, group.name))
            elif isinstance(code, int):
                self.queue.ended(job_id, code)
                ended = ("ended", job_id, str(code))
                self.calls.submit(job_id, ended, partial(self.cluster.remove, group.name))
            elif code == GONE:
                self.calls.submit(
                    job_id, ("gone", job_id), partial(self.cluster.remove, group.name)
                )
            elif _start(group.name) > row.starts:  # started, then the adapter killed
                self.queue.adopt(job_id, _start(group.name), group.gpu_type or "", group.placement)
                self.log.warning("adopted", job=job_id, group=group.name)
        held_back = self._removed(self.calls.finish())
        for job_id, row in rows.items():
            if row.state == "running" and job_id not in ours:
                self.queue.requeued(job_id)
                self.log.warning("requeued", job=job_id, reason="Ray holds no group for it")
        return held_back

    def _removed(self, calls: Iterable[Ended]) -> dict[str, str]:
        """Log the settling's removals; jobs whose group could not be removed, with why."""
        held_back: dict[str, str] = {}
        for call in calls:
            what, key, *detail = call.command
            if call.error is not None and what == "older":
                self.log.error("not_removed", group=key, error=call.error)
            elif call.error is not None:
                held_back[key] = f"its placement group could not be removed: {call.error}"
            elif what == "older":
                self.log.warning("removed", group=key, reason="an older start of its job")
            elif what == "stopped":
                self.log.info("removed", job=key, reason=detail[0])
            elif what == "ended":
                self.log.info("ended", job=key, exit_code=int(detail[0]))
            else:
                self.queue.requeued(key)
                self.log.warning("requeued", job=key, reason="its actor is gone")
        return held_back


def _unsettled(
    rows: Mapping[str, QueuedJob], ours: Mapping[str, Group], exits: Mapping[str, object]
) -> dict[str, str]:
    """What a real read would settle first, named (a dry run leaves these jobs alone)."""
    out: dict[str, str] = {}
    for job_id, group in ours.items():
        code = exits.get(group.name)
        if job_id in rows and rows[job_id].active and isinstance(code, int):
            out[job_id] = f"its entrypoint exited ({code}); the next round removes its group"
        elif code == GONE:
            out[job_id] = "its actor is gone; the next round requeues it"
    return out


def _start(name: str) -> int:
    """The start number of a group named `apportion-<queue>-<job>.<start>` (0 if none)."""
    number = name.rpartition(".")[2]
    return int(number) if number.isdigit() else 0


def _state(row: QueuedJob | None) -> str:
    return "not in the queue" if row is None else row.state


def _placement(text: str) -> dict[str, int]:
    """`n1:4+n2:4` → {n1: 4, n2: 4}."""
    return {node: int(gpus) for node, _, gpus in (p.rpartition(":") for p in text.split("+"))}
