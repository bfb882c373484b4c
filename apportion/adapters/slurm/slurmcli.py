"""Slurm through its own command-line tools: `sinfo --json` and `squeue --json` read the cluster,
`scontrol` changes jobs.

Parsing is pure (`parse_nodes`, `parse_jobs` take the decoded documents of Slurm 22.05,
openapi v0.0.38; `parse_version` the line of `sinfo --version`) so it is tested on recorded
samples; `Slurm` runs the commands. The commands find the cluster the usual way (`SLURM_CONF`
in the environment, else the system's configuration).
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: Node states whose GPUs a round may use, and the flags (`state_flags`) that take a node out.
USABLE_NODE_STATES = frozenset({"idle", "mixed", "allocated", "completing"})
UNUSABLE_NODE_FLAGS = frozenset(
    {
        "DRAIN",
        "DRAINING",
        "DRAINED",
        "FAIL",
        "MAINTENANCE",
        "NOT_RESPONDING",
        "POWER_DOWN",
        "POWERED_DOWN",
        "POWERING_DOWN",
        "REBOOT_REQUESTED",
        "RESERVED",
    }
)

#: The Slurm releases (major, minor) whose JSON and `scontrol` behaviour the adapter knows.
SUPPORTED = ((22, 5),)
#: The JSON documents those releases write (`meta.plugin.type`).
OPENAPI = "openapi/v0.0.38"

_VERSION = re.compile(r"^slurm(?:-wlm)?\s+(?P<major>\d+)\.(?P<minor>\d+)(?:\.(?P<micro>\d+))?")
_GPU_REQUEST = re.compile(r"^gres[:/]gpu(?::(?P<type>[^:,()]+))?:(?P<count>\d+)$")
_GPU_DETAIL = re.compile(r"^gpu(?::(?P<type>[^:,()]+))?:(?P<count>\d+)")


class SlurmError(RuntimeError):
    """A Slurm command failed or answered something unreadable; the message says which."""


@dataclass(frozen=True)
class SlurmNode:
    """A node with its typed GPUs, as `sinfo --json` reports it."""

    name: str
    gpu_type: str | None
    gpus: int
    state: str
    flags: frozenset[str] = frozenset()
    features: tuple[str, ...] = ()
    partitions: tuple[str, ...] = ()
    #: Its slurmd has registered with the running slurmctld (`slurmd_start_time` is 0 until it
    #: has, for the first seconds after a slurmctld restart, whatever `state` says).
    registered: bool = True

    @property
    def usable(self) -> bool:
        """Up, registered and accepting jobs: not down, invalid, drained, reserved ... A job
        started on a node whose slurmd has not registered again after a slurmctld restart
        comes up without its GPUs (`gpu:k80:0`)."""
        usable = self.state.lower() in USABLE_NODE_STATES and self.registered
        return usable and not self.flags & UNUSABLE_NODE_FLAGS


@dataclass(frozen=True)
class SlurmJob:
    """A job and its GPU request, as `squeue --json` reports it.

    - gpus: GPUs the whole job asks for (per job, or per node × nodes)
    - per_node: the request is `--gres=gpu:N` (N on each of `node_count` nodes), not `--gpus`
    - requested_type: the GPU type named in the request (`--gres=gpu:v100:2`), else None
    - placement: node → GPUs while it runs, from `gres_detail`; `running_type` the type there
    - held: pending with a hold (user or admin), so Slurm will not start it by itself;
      `hold_reason` Slurm's word for a hold, pending or running (a user may hold a running job)
    - gres_detail: the GPUs allocated on each node of `nodes`, as Slurm writes them
      (`gpu:k80:4(IDX:0-3)`); `without_gpus` says when they fall short of the request;
      `allocated` the nodes allocated to it (`job_resources`), GPUs or not
    - partitions: the partition it runs in, or those it may start in while pending
    """

    id: str
    name: str
    state: str
    reason: str
    comment: str
    gpus: int
    per_node: bool
    node_count: int
    requested_type: str | None
    features: str
    priority: int
    start_time: float
    requeue: bool
    placement: dict[str, int] = field(default_factory=dict)
    running_type: str | None = None
    partitions: tuple[str, ...] = ()
    account: str = ""
    nodes: str = ""
    gres_detail: tuple[str, ...] = ()
    allocated: tuple[str, ...] = ()

    @property
    def pending(self) -> bool:
        return self.state == "PENDING"

    @property
    def running(self) -> bool:
        return self.state in ("RUNNING", "CONFIGURING")

    @property
    def holds_gpus(self) -> bool:
        """Its GPUs are allocated: running, starting, suspended or still completing."""
        return self.state in ("RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "STOPPED")

    @property
    def held(self) -> bool:
        return self.pending and self.reason.startswith("JobHeld")

    @property
    def hold_reason(self) -> str | None:
        """`JobHeldUser` or `JobHeldAdmin` when the job carries a hold, else None."""
        return self.reason if self.reason.startswith("JobHeld") else None

    @property
    def without_gpus(self) -> str | None:
        """Why a running job lacks GPUs it asked for (it came up with fewer, e.g.
        `gpu:k80:0` while slurmctld restarted), or None."""
        # RUNNING only: a job still CONFIGURING may not show its GPUs yet.
        if self.state != "RUNNING" or self.gpus <= 0 or sum(self.placement.values()) >= self.gpus:
            return None
        got = sum(self.placement.values())
        detail = " ".join(self.gres_detail) or "no GPU"
        return f"it runs with {got} of the {self.gpus} GPUs it asked for ({detail} on {self.nodes})"


def parse_nodes(document: Mapping[str, Any]) -> list[SlurmNode]:
    """The nodes of a `sinfo --json` document (one entry per node; GPU-less nodes included with
    0 GPUs). Raises `SlurmError` naming the field when the document is not what 22.05 writes."""
    try:
        raw = document["nodes"]
        return [_node(entry) for entry in raw]
    except (KeyError, TypeError, ValueError) as exc:
        raise SlurmError(f"sinfo --json: unexpected document ({exc!r})") from None


def _node(entry: Mapping[str, Any]) -> SlurmNode:
    gpu_type, gpus = None, 0
    for item in str(entry.get("gres") or "").split(","):
        match = _GPU_DETAIL.match(item.strip())
        if match:
            gpu_type, gpus = match["type"], gpus + int(match["count"])
    features = tuple(f for f in str(entry.get("active_features") or "").split(",") if f)
    flags = frozenset(str(f).upper() for f in entry.get("state_flags") or ())
    partitions = tuple(str(p) for p in entry.get("partitions") or ())
    name, state = str(entry["name"]), str(entry["state"])
    registered = entry.get("slurmd_start_time") != 0
    return SlurmNode(name, gpu_type, gpus, state, flags, features, partitions, registered)


def without_type_feature(nodes: Sequence[SlurmNode]) -> dict[str, str]:
    """Node → GPU type, for each typed node that lacks a feature named after its type: the
    adapter steers a job's type through `--constraint`, which only such features satisfy."""
    return {
        n.name: n.gpu_type for n in nodes if n.gpu_type is not None and n.gpu_type not in n.features
    }


def parse_jobs(document: Mapping[str, Any]) -> list[SlurmJob]:
    """The jobs of a `squeue --json` document, GPU jobs and others alike (`gpus` 0 for the
    latter). Raises `SlurmError` when the document is not what 22.05 writes."""
    try:
        return [_job(entry) for entry in document["jobs"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise SlurmError(f"squeue --json: unexpected document ({exc!r})") from None


def _job(entry: Mapping[str, Any]) -> SlurmJob:
    per_job = _gpu_request(entry.get("tres_per_job"))
    per_node = _gpu_request(entry.get("tres_per_node"))
    node_count = int(entry.get("node_count") or 1)
    if per_job is not None:
        requested_type, gpus, is_per_node = per_job[0], per_job[1], False
    elif per_node is not None:
        requested_type, gpus, is_per_node = per_node[0], per_node[1] * node_count, True
    else:
        requested_type, gpus, is_per_node = None, 0, False
    placement, running_type = _placement(entry)
    return SlurmJob(
        id=str(entry["job_id"]),
        name=str(entry.get("name") or ""),
        state=str(entry["job_state"]),
        reason=str(entry.get("state_reason") or ""),
        comment=str(entry.get("comment") or ""),
        gpus=gpus,
        per_node=is_per_node,
        node_count=node_count,
        requested_type=requested_type,
        features=str(entry.get("features") or ""),
        priority=int(entry.get("priority") or 0),
        start_time=float(entry.get("start_time") or 0),
        requeue=bool(entry.get("requeue", True)),
        placement=placement,
        running_type=running_type,
        partitions=tuple(p for p in str(entry.get("partition") or "").split(",") if p),
        account=str(entry.get("account") or ""),
        nodes=str(entry.get("nodes") or ""),
        gres_detail=tuple(str(d) for d in entry.get("gres_detail") or ()),
        allocated=tuple(
            str(n["nodename"])
            for n in (entry.get("job_resources") or {}).get("allocated_nodes") or ()
        ),
    )


def _gpu_request(tres: Any) -> tuple[str | None, int] | None:
    """(type or None, count) of the GPU item in a `tres_per_*` string such as
    `gres:gpu:v100:2`; None when it asks for no GPU."""
    for item in str(tres or "").split(","):
        match = _GPU_REQUEST.match(item.strip())
        if match:
            return match["type"], int(match["count"])
    return None


def _placement(entry: Mapping[str, Any]) -> tuple[dict[str, int], str | None]:
    """Node → GPUs of a running job: `gres_detail` has one item per allocated node, in the
    order of `job_resources.allocated_nodes`."""
    details = entry.get("gres_detail") or []
    resources = entry.get("job_resources") or {}
    names = [str(n["nodename"]) for n in resources.get("allocated_nodes") or []]
    placement: dict[str, int] = {}
    running_type = None
    for name, detail in zip(names, details, strict=False):
        match = _GPU_DETAIL.match(str(detail))
        if match and int(match["count"]) > 0:
            placement[name] = placement.get(name, 0) + int(match["count"])
            running_type = match["type"] or running_type
    return placement, running_type


def parse_version(line: str) -> tuple[int, int, str]:
    """(major, minor, release) from `sinfo --version` (`slurm 22.05.8`); `SlurmError` when the
    line is not one."""
    match = _VERSION.match(line.strip())
    if match is None:
        raise SlurmError(f"sinfo --version: cannot read a Slurm version in {line.strip()!r}")
    release = line.strip().split()[1]
    return int(match["major"]), int(match["minor"]), release


def unsupported(line: str) -> str | None:
    """Why the Slurm of `sinfo --version` cannot be driven, or None when it can."""
    major, minor, release = parse_version(line)
    if (major, minor) in SUPPORTED:
        return None
    known = ", ".join(f"{a}.{b:02d}" for a, b in SUPPORTED)
    return (
        f"Slurm {release} is not supported: apportion-slurm reads the JSON of Slurm {known} "
        f"(sinfo and squeue --json, {OPENAPI}) and relies on its scontrol behaviour"
    )


class Slurm:
    """Runs Slurm's commands (`env`: the environment they run with; None = ours)."""

    def __init__(self, env: Mapping[str, str] | None = None, timeout: float = 30) -> None:
        self.env = dict(env) if env is not None else None
        self.timeout = timeout

    def nodes(self) -> list[SlurmNode]:
        """Every node, from `sinfo --json`."""
        return parse_nodes(self._json("sinfo", "--json"))

    def jobs(self) -> list[SlurmJob]:
        """Every job Slurm still lists, from `squeue --json`."""
        return parse_jobs(self._json("squeue", "--json"))

    def config(self) -> dict[str, str]:
        """`scontrol show config` as name → value (`ClusterName` → `test`)."""
        lines = self.run(("scontrol", "show", "config")).splitlines()
        pairs = (line.partition(" = ") for line in lines if " = " in line)
        return {name.strip(): value.strip() for name, _, value in pairs}

    def version(self) -> str:
        """The line of `sinfo --version` (`slurm 22.05.8`)."""
        return self.run(("sinfo", "--version")).strip()

    def run(self, command: Sequence[str]) -> str:
        """Run one command (an `scontrol ...` of a plan); its output. Raises `SlurmError` with
        Slurm's own message when it fails."""
        try:
            done = subprocess.run(
                list(command),
                env=self.env,
                capture_output=True,
                text=True,
                timeout=self.timeout,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SlurmError(f"{command[0]}: {exc}") from None
        if done.returncode != 0:
            said = (done.stderr.strip() or done.stdout.strip()).splitlines()
            detail = said[-1] if said else f"exit status {done.returncode}"
            raise SlurmError(f"{' '.join(command)}: {detail}")
        return done.stdout

    def _json(self, *command: str) -> dict[str, Any]:
        out = self.run(command)
        try:
            document = json.loads(out)
        except json.JSONDecodeError as exc:
            raise SlurmError(f"{' '.join(command)}: not JSON ({exc.msg})") from None
        return checked_document(document, " ".join(command))


def checked_document(document: Any, command: str) -> dict[str, Any]:
    """A decoded `--json` answer of `command`, once it is known to be a 22.05 document without
    errors; `SlurmError` otherwise (Slurm upgraded under a running adapter is caught here)."""
    if not isinstance(document, dict):
        raise SlurmError(f"{command}: not a JSON object")
    errors = document.get("errors") or []
    if errors:
        raise SlurmError(f"{command}: {errors[0]}")
    meta = document.get("meta") or {}
    written = (meta.get("plugin") or {}).get("type")
    if written is not None and written != OPENAPI:
        raise SlurmError(f"{command}: {written} documents are not supported (only {OPENAPI})")
    release = (meta.get("Slurm") or meta.get("slurm") or {}).get("release")
    if release is not None and unsupported(f"slurm {release}") is not None:
        raise SlurmError(f"{command}: written by Slurm {release}, which is not supported")
    return document
