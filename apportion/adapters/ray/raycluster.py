"""Ray's I/O for the adapter: the nodes and their GPU types, the placement groups Ray holds,
and the three things the adapter does: start a job (a placement group and the actor holding
it), stop one (its checkpoint contract, then the group removed) and poll their entrypoints.

Nodes say what they are with two custom resources, declared at `ray start`
(`--num-gpus 8 --resources '{"apportion_gpu_v100": 8, "apportion_node_n1": 8}'`): the GPU type
and a node name of the adapter's own (Ray's `node:<ip>` is not unique when several raylets share
a host). A job's group has one bundle per node of its placement, each asking for that node's
GPUs of the job as `GPU`, the type resource and the node resource, so Ray can put it nowhere
else. Enacted state is read from `placement_group_table()` (what the GCS holds now), never from
`available_resources()`, which lags by seconds.

Groups and actors are detached (they outlive the adapter's connection: a restarted adapter
finds them) and named `apportion-<queue>-<job>.<start>`: a job Ray holds a group for is running (the
adapter never starts it again), and Ray refuses a second group or actor of the same name.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

NODE_PREFIX = "apportion_node_"
TYPE_PREFIX = "apportion_gpu_"
NAMESPACE = "apportion"
#: The poll's answer for a job whose actor is gone (its entrypoint can no longer run).
GONE = "gone"
#: The poll's answer for a job whose actor did not answer in time (its worker still starting).
STARTING = "starting"


class RayError(RuntimeError):
    """Ray cannot be reached or refused a call; the message is one line."""


@dataclass(frozen=True)
class RayNode:
    """A raylet: its adapter name and GPU type (None when it declares none), its GPUs."""

    node_id: str
    name: str | None
    gpu_type: str | None
    gpus: int
    alive: bool
    problem: str | None = None


@dataclass(frozen=True)
class Group:
    """A placement group Ray holds (not removed): where its GPUs are, by node id and by the
    adapter's node names (empty for groups that are not the adapter's)."""

    id: str
    name: str
    state: str
    gpu_type: str | None
    placement: dict[str, int] = field(default_factory=dict)
    by_node_id: dict[str, int] = field(default_factory=dict)


def group_name(queue: str, job_id: str, start: int) -> str:
    """`apportion-<queue>-<job>.<start>`: a name per start, as Ray frees a removed group's
    actor name only once the actor is dead."""
    return f"apportion-{queue}-{job_id}.{start}"


def bundles(gpu_type: str, placement: Mapping[str, int]) -> list[dict[str, float]]:
    """One bundle per node: its GPUs, as `GPU`, the type and the node resource."""
    return [
        {"GPU": float(g), f"{TYPE_PREFIX}{gpu_type}": float(g), f"{NODE_PREFIX}{n}": float(g)}
        for n, g in placement.items()
    ]


def parse_node(entry: Mapping[str, Any]) -> RayNode:
    """One entry of `ray.nodes()`."""
    resources: Mapping[str, float] = entry.get("Resources") or {}
    names = [k[len(NODE_PREFIX) :] for k in resources if k.startswith(NODE_PREFIX)]
    types = [k[len(TYPE_PREFIX) :] for k in resources if k.startswith(TYPE_PREFIX)]
    gpus = int(resources.get("GPU", 0))
    problem = None
    if len(names) > 1 or len(types) > 1:
        problem = f"declares {len(names)} node names and {len(types)} GPU types (one each)"
    elif names and types and resources[f"{NODE_PREFIX}{names[0]}"] < gpus:
        problem = f"its resource {NODE_PREFIX}{names[0]} is less than its {gpus} GPUs"
    return RayNode(
        node_id=str(entry.get("NodeID")),
        name=names[0] if len(names) == 1 else None,
        gpu_type=types[0] if len(types) == 1 else None,
        gpus=gpus,
        alive=bool(entry.get("Alive")),
        problem=problem,
    )


def parse_group(entry: Mapping[str, Any]) -> Group:
    """One entry of `placement_group_table()`."""
    placement: dict[str, int] = {}
    kinds = set()
    by_node: dict[str, int] = {}
    located = entry.get("bundles_to_node_id") or {}
    for index, bundle in (entry.get("bundles") or {}).items():
        gpus = int(bundle.get("GPU", 0))
        for resource in bundle:
            if resource.startswith(NODE_PREFIX):
                placement[resource[len(NODE_PREFIX) :]] = gpus
            elif resource.startswith(TYPE_PREFIX):
                kinds.add(resource[len(TYPE_PREFIX) :])
        node_id = located.get(index)
        if node_id and gpus:
            by_node[str(node_id)] = by_node.get(str(node_id), 0) + gpus
    return Group(
        id=str(entry["placement_group_id"]),
        name=str(entry.get("name") or ""),
        state=str(entry.get("state")),
        gpu_type=kinds.pop() if len(kinds) == 1 else None,
        placement=placement,
        by_node_id=by_node,
    )


class RayCluster:
    """A connection to a Ray cluster (`address`; None: the one this process is connected to,
    or `ray.init()`'s default)."""

    def __init__(self, address: str | None = None, grace: float = 30.0) -> None:
        self.address, self.grace = address, grace
        self._handles: dict[str, Any] = {}
        self._ids: dict[str, str] = {}
        self._states: dict[str, str] = {}
        self._made: dict[str, Any] = {}  # groups reserved, their actor not launched yet
        self._runner: Any = None
        self._mine = False  # this object connected (and so disconnects)

    def connect(self) -> None:
        import ray

        try:
            if not ray.is_initialized():
                self._mine = True
                ray.init(
                    address=self.address,
                    namespace=NAMESPACE,
                    log_to_driver=False,
                    logging_level=logging.ERROR,
                    configure_logging=False,
                )
        except Exception as exc:  # ConnectionError, or Ray's own on a bad address
            raise RayError(f"cannot connect to Ray at {self.address or 'auto'}: {exc}") from None
        if self._runner is None:
            from apportion.adapters.ray import runner

            # By value: the nodes need only Ray, not apportion, to run the actor.
            ray.cloudpickle.register_pickle_by_value(runner)  # type: ignore[no-untyped-call]
            self._runner = ray.remote(runner.JobRunner)

    def close(self) -> None:
        """Disconnect, when this object connected (the jobs' detached groups and actors go on
        running)."""
        import ray

        if self._mine and ray.is_initialized():
            ray.shutdown()
        self._mine = False

    def nodes(self) -> list[RayNode]:
        import ray

        self.connect()
        try:
            return [parse_node(entry) for entry in ray.nodes()]  # type: ignore[no-untyped-call]
        except Exception as exc:
            raise RayError(f"cannot list Ray's nodes: {exc}") from None

    def groups(self) -> list[Group]:
        """The placement groups Ray holds now (removed ones left out)."""
        from ray.util.placement_group import placement_group_table

        self.connect()
        try:
            table = placement_group_table()
        except Exception as exc:
            raise RayError(f"cannot read Ray's placement groups: {exc}") from None
        live = [parse_group(e) for e in table.values() if e.get("state") != "REMOVED"]
        for group in live:
            self._ids[group.name], self._states[group.name] = group.id, group.state
        return live

    def poll(self, names: Iterable[str], timeout: float = 0.3) -> dict[str, int | str | None]:
        """Per job's group name: its entrypoint's exit code, None while it runs, `STARTING`
        when its actor did not answer within `timeout` (still being created), `GONE` when its
        actor is no more."""
        import ray

        asked: dict[str, Any] = {}
        answers: dict[str, int | str | None] = {}
        for name in names:
            handle = self._handle(name)
            if handle is None:
                answers[name] = GONE
            else:
                asked[name] = handle.poll.remote()
        ready, _ = ray.wait(list(asked.values()), num_returns=len(asked), timeout=timeout)
        done = set(ready)
        for name, ref in asked.items():
            answers[name] = self._answer(ref) if ref in done else STARTING
        return answers

    def start(
        self,
        name: str,
        gpu_type: str,
        placement: Mapping[str, int],
        job: tuple[str, str | None, Mapping[str, str]],
    ) -> None:
        """The group on `placement`, and the actor running `job` (entrypoint, cwd, env)
        in its first bundle (`reserve`, then `launch`)."""
        self.reserve(name, gpu_type, placement)
        self.launch(name, placement, job)

    def reserve(self, name: str, gpu_type: str, placement: Mapping[str, int]) -> None:
        """The group on `placement` (created when Ray has the GPUs: `groups` says when)."""
        from ray.util.placement_group import placement_group

        self.connect()
        try:
            group = placement_group(
                bundles(gpu_type, placement), strategy="PACK", name=name, lifetime="detached"
            )
        except Exception as exc:  # a group of that name exists: the job runs already
            raise RayError(f"placement group {name}: {_first_line(exc)}") from None
        self._ids[name] = group.id.hex()
        self._states[name] = "PENDING"
        self._made[name] = group  # knows its bundles: the actor's options need no lookup

    def created(self, names: Iterable[str], timeout: float) -> set[str]:
        """Wait (at most `timeout` seconds) for Ray to create the groups `reserve` made; the
        names of those it created. One wait for them all: the GCS answers each once it has
        reserved the group's GPUs."""
        import ray

        refs = {self._made[name].ready(): name for name in names if name in self._made}
        if not refs:
            return set()
        try:
            ready, _ = ray.wait(list(refs), num_returns=len(refs), timeout=timeout)
        except Exception as exc:
            raise RayError(f"cannot wait for placement groups: {_first_line(exc)}") from None
        return {refs[ref] for ref in ready}

    def launch(
        self,
        name: str,
        placement: Mapping[str, int],
        job: tuple[str, str | None, Mapping[str, str]],
    ) -> None:
        """The actor running `job` (entrypoint, cwd, env) in the first bundle of the group
        `reserve` made; the group removed when Ray refuses the actor."""
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        group = self._made.pop(name)
        strategy = PlacementGroupSchedulingStrategy(group, placement_group_bundle_index=0)
        try:
            handle = self._runner.options(
                name=name,
                namespace=NAMESPACE,
                lifetime="detached",
                num_cpus=0,
                num_gpus=next(iter(placement.values())),
                max_restarts=0,
                scheduling_strategy=strategy,
            ).remote(*job)
        except Exception as exc:  # the name taken: by an actor not this group's, left alone
            with suppress(RayError):
                self.remove(name, actor=False)
            raise RayError(f"actor {name}: {_first_line(exc)}") from None
        self._handles[name] = handle

    def stop(self, name: str, starting: bool = False) -> None:
        """The checkpoint contract (SIGTERM, `grace` seconds, SIGKILL), then the group
        removed, which frees its GPUs (`signal`, then `drain`)."""
        self.drain(name, self.signal(name, starting))

    def signal(self, name: str, starting: bool = False) -> Any:
        """Ask the job's actor to stop its entrypoint (the checkpoint contract: SIGTERM,
        `grace` seconds, SIGKILL) without waiting: the reply to wait for, or None when there
        is nothing to ask. A job whose actor did not answer the last poll (`starting`) and
        that the GCS does not list as alive yet has had no time to do work worth a
        checkpoint: it is not asked."""
        handle = self._handle(name) if self._states.get(name) == "CREATED" else None
        if handle is not None and starting and not _alive(handle):
            handle = None
        return None if handle is None else handle.terminate.remote(self.grace)

    def drain(self, name: str, reply: Any) -> None:
        """Wait for the entrypoint to have stopped (`reply`, from `signal`), then remove the
        group."""
        import ray
        from ray.exceptions import GetTimeoutError, RayActorError

        if reply is not None:
            # Gone already, or stuck: removing the group kills what is left.
            with suppress(RayActorError, GetTimeoutError):
                ray.get(reply, timeout=self.grace + 10.0)
        self.remove(name)

    def remove(self, name: str, actor: bool = True) -> None:
        """Remove the group named `name`, and (with `actor`) kill its actor: one whose
        creation was still pending would otherwise keep its name."""
        import ray
        from ray import PlacementGroupID
        from ray.util.placement_group import PlacementGroup, remove_placement_group

        group_id = self._ids.get(name)
        if group_id is None:
            raise RayError(f"placement group {name}: Ray does not hold it")
        handle = self._handle(name) if actor else None
        try:
            remove_placement_group(PlacementGroup(PlacementGroupID.from_hex(group_id)))
        except Exception as exc:
            raise RayError(f"placement group {name}: {_first_line(exc)}") from None
        if handle is not None:
            with suppress(Exception):  # dead already: nothing holds the name
                ray.kill(handle, no_restart=True)
        self._handles.pop(name, None)
        self._made.pop(name, None)
        self._ids.pop(name, None)
        self._states.pop(name, None)

    def _handle(self, name: str) -> Any:
        import ray

        if name not in self._handles:
            try:
                self._handles[name] = ray.get_actor(name, namespace=NAMESPACE)
            except ValueError:  # no such actor
                return None
        return self._handles[name]

    def _answer(self, ref: Any) -> int | str | None:
        import ray
        from ray.exceptions import RayActorError

        try:
            code = ray.get(ref)
        except RayActorError:
            return GONE
        return int(code) if code is not None else None


def _alive(handle: Any) -> bool:
    """The GCS lists the actor as alive (its constructor, which starts the entrypoint, has
    returned); True when that cannot be told, so the job gets its checkpoint signal."""
    try:
        from ray._private import state

        return bool(state.actors(actor_id=handle._actor_id.hex()).get("State") == "ALIVE")
    except Exception:
        return True


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
