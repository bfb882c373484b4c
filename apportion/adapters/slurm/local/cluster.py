"""A real Slurm 22.05 cluster on this host, for the try-out and the adapter's tests: munged,
slurmctld and four slurmd (two V100 nodes, two K80 nodes, 8 fake GPUs each), all state under
one directory. Partitions: `gpu` (every node, the default) and `k80` (the K80 nodes).

Everything runs in the foreground under our own PIDs and is stopped by PID: the daemons we
started, and the processes of the cluster's jobs (its slurmstepd and their descendants), never
anything else that merely names the cluster (`stop`). The GPUs are
character devices made with mknod (a `gres.conf` line without `File=` is dropped and the node
goes INVALID). Commands find the cluster through `SLURM_CONF` in `Cluster.env`, never through a
system-wide configuration. `start` installs the Debian packages when they are missing and we are
root (`packages`); `Unavailable` says why a cluster cannot be had. With `hold_partitions`, the
controller holds every GPU job submitted to them (`JOB_SUBMIT`), as docs/SLURM.md recommends.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from apportion.adapters.slurm.local.packages import Unavailable, ensure, program

NODES = {"n1": "v100", "n2": "v100", "n3": "k80", "n4": "k80"}
PARTITIONS = {"gpu": tuple(NODES), "k80": ("n3", "n4")}
GPUS_PER_NODE = 8

__all__ = ["GPUS_PER_NODE", "NODES", "PARTITIONS", "Cluster", "Unavailable", "running"]


@dataclass
class Cluster:
    """A running test cluster: its directory, configuration and daemon processes."""

    root: Path
    conf: Path
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def env(self) -> dict[str, str]:
        """The environment every Slurm command of this cluster runs with."""
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run a Slurm command against this cluster."""
        done = subprocess.run(
            list(args), env=self.env, capture_output=True, text=True, timeout=30, check=False
        )
        if check and done.returncode != 0:
            raise RuntimeError(f"{' '.join(args)}: {done.stderr.strip() or done.stdout.strip()}")
        return done

    def sbatch(self, *options: str, seconds: int = 60) -> str:
        """Submit a `sleep` job with these sbatch options; its job id."""
        script = f"#!/bin/sh\nsleep {seconds}\n"
        done = subprocess.run(
            ["sbatch", "--parsable", "--output=/dev/null", *options],
            input=script,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"sbatch {' '.join(options)}: {done.stderr.strip()}")
        return done.stdout.strip().split(";")[0]

    def jobs(self) -> dict[str, dict[str, Any]]:
        """Slurm's own view: job id → its `squeue --json` entry (finished jobs included)."""
        data = json.loads(self.run("squeue", "--json").stdout)
        return {str(job["job_id"]): job for job in data["jobs"]}

    def stop_controller(self) -> None:
        """Stop slurmctld as an operator's restart does (SIGTERM; it saves its state)."""
        old = self.processes[1]
        old.send_signal(signal.SIGTERM)
        old.wait(timeout=30)

    def start_controller(self) -> None:
        """Start slurmctld again on its saved state; returns once it answers."""
        command = [program("slurmctld"), "-D", "-i", "-f", str(self.conf)]
        self.processes[1] = _daemon(command, self.env)
        _wait_for(
            lambda: " is UP" in self.run("scontrol", "ping", check=False).stdout,
            30,
            "slurmctld did not come back",
        )

    def clear_jobs(self, seconds: float = 30) -> None:
        """Cancel every job (between tests only: the adapter itself never cancels) and wait
        until none is left running."""
        live = [j for j, job in self.jobs().items() if _state(job) not in FINISHED]
        if live:
            self.run("scancel", "--full", *live, check=False)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if all(_state(job) in FINISHED for job in self.jobs().values()):
                return
            time.sleep(0.3)
        raise RuntimeError("jobs still alive after scancel")


FINISHED = {"COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL"}


def _state(job: dict[str, Any]) -> str:
    return str(job.get("job_state", ""))


def free_ports(n: int) -> list[int]:
    """n distinct ports free right now on 127.0.0.1."""
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [int(s.getsockname()[1]) for s in sockets]
    finally:
        for s in sockets:
            s.close()


def write_config(root: Path, hold_partitions: Iterable[str] = ()) -> Path:
    """slurm.conf and gres.conf (and job_submit.lua, with `hold_partitions`) under `root`, with
    fresh ports and fake GPU devices; the slurm.conf."""
    hold_partitions = tuple(hold_partitions)
    for sub in ("run", "log", "spool/ctld", "spool/d", "dev"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    # munged wants its socket's directory, and every directory above it, searchable by all.
    for directory in (root, root / "run"):
        directory.chmod(0o755)
    for i in range(GPUS_PER_NODE * 2):
        device = root / "dev" / f"nvidia{i}"
        if not device.exists():
            os.mknod(device, 0o666 | 0o020000, os.makedev(1, 3))  # a character device
    ctld, slurmd, *node_ports = free_ports(2 + len(NODES))
    lines = [line.replace("@D", str(root)) for line in CONF_TEMPLATE.strip().splitlines()]
    lines += [f"SlurmctldPort={ctld}", f"SlurmdPort={slurmd}"]
    gres = ["AutoDetect=off"]
    for (name, kind), port in zip(NODES.items(), node_ports, strict=True):
        lines.append(
            f"NodeName={name} NodeHostname=localhost NodeAddr=127.0.0.1 Port={port} CPUs=16 "
            f"RealMemory=64000 Gres=gpu:{kind}:{GPUS_PER_NODE} Feature={kind} State=UNKNOWN"
        )
        first = 0 if kind == "v100" else GPUS_PER_NODE  # one set of devices per type
        devices = f"{root}/dev/nvidia[{first}-{first + GPUS_PER_NODE - 1}]"
        gres.append(f"NodeName={name} Name=gpu Type={kind} File={devices}")
    for name, members in PARTITIONS.items():
        default = "YES" if name == "gpu" else "NO"
        lines.append(
            f"PartitionName={name} Nodes={','.join(members)} Default={default} "
            "MaxTime=INFINITE State=UP"
        )
    if hold_partitions:
        lines.append("JobSubmitPlugins=lua")  # job_submit.lua, next to slurm.conf
        (root / "job_submit.lua").write_text(job_submit_lua(hold_partitions, default="gpu"))
    (root / "gres.conf").write_text("\n".join(gres) + "\n")
    conf = root / "slurm.conf"
    conf.write_text("\n".join(lines) + "\n")
    return conf


# A configuration that works on one host as root, without systemd or cgroups; the short KillWait
# and MinJobAge keep requeues and finished jobs from lingering across few-second rounds.
CONF_TEMPLATE = """
ClusterName=test
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=@D/run/munge.sock
StateSaveLocation=@D/spool/ctld
SlurmdSpoolDir=@D/spool/d/%n
SlurmctldPidFile=@D/run/slurmctld.pid
SlurmdPidFile=@D/run/slurmd-%n.pid
SlurmctldLogFile=@D/log/slurmctld.log
SlurmdLogFile=@D/log/slurmd-%n.log
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=5
GresTypes=gpu
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SlurmdParameters=config_overrides
ReturnToService=2
PriorityType=priority/basic
MailProg=/bin/true
KillWait=2
MinJobAge=600
"""


def start(root: Path, seconds: float = 60, hold_partitions: Iterable[str] = ()) -> Cluster:
    """Start munged, slurmctld and the four slurmd under `root`; returns when every node is
    idle. Raises `Unavailable` when it cannot be done here."""
    ensure()
    if os.geteuid() != 0:
        raise Unavailable("the fake GPUs (mknod) and slurmd's user switching need root")
    conf = write_config(root, hold_partitions)
    cluster = Cluster(root, conf)
    try:
        key = root / "munge.key"
        subprocess.run([program("mungekey"), "-c", "-k", str(key)], check=True, capture_output=True)
        munge = [
            program("munged"),
            "-F",
            f"--socket={root}/run/munge.sock",
            f"--key-file={key}",
            f"--log-file={root}/log/munged.log",
            f"--pid-file={root}/run/munged.pid",
            f"--seed-file={root}/run/munged.seed",
        ]
        cluster.processes.append(_daemon(munge))
        _wait_for(lambda: (root / "run/munge.sock").exists(), 10, "munged did not start")
        ctld = [program("slurmctld"), "-D", "-i", "-f", str(conf)]
        cluster.processes.append(_daemon(ctld, cluster.env))
        for name in NODES:
            slurmd = [program("slurmd"), "-D", "-N", name, "-f", str(conf)]
            cluster.processes.append(_daemon(slurmd, cluster.env))
        _wait_for(lambda: _all_idle(cluster), seconds, "the nodes did not become idle")
    except BaseException:
        stop(cluster)
        raise
    return cluster


def _daemon(command: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """A daemon in the foreground, its output discarded (it logs to the cluster's log/)."""
    return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


#: job_submit.lua: GPU jobs submitted to a managed partition are held at submission (priority
#: 0), so that only the adapter starts them and users need not pass --hold.
JOB_SUBMIT = """\
-- job_submit.lua, next to slurm.conf, with JobSubmitPlugins=lua: GPU jobs submitted to a
-- partition apportion-slurm manages are held, so that only the adapter starts them.
local managed = { @MANAGED@ }  -- the adapter's --partition values
local default = "@DEFAULT@"  -- the cluster's default partition

function slurm_job_submit(job_desc, part_list, submit_uid)
    local request = (job_desc.tres_per_node or "") .. (job_desc.tres_per_job or "")
        .. (job_desc.tres_per_socket or "") .. (job_desc.tres_per_task or "")
    if string.find(request, "gpu") == nil then
        return slurm.SUCCESS
    end
    for partition in string.gmatch(job_desc.partition or default, "[^,]+") do
        if managed[partition] then
            job_desc.priority = 0
        end
    end
    return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
    return slurm.SUCCESS
end
"""


def job_submit_lua(partitions: Iterable[str], default: str) -> str:
    """`JOB_SUBMIT` for these managed partitions and the cluster's default partition."""
    managed = ", ".join(f'["{p}"] = true' for p in partitions)
    return JOB_SUBMIT.replace("@MANAGED@", managed).replace("@DEFAULT@", default)


def _all_idle(cluster: Cluster) -> bool:
    for p in cluster.processes:
        if p.poll() is not None:
            name = Path(str(p.args[0])).name  # type: ignore[index]
            raise Unavailable(f"{name} exited with {p.returncode}; see {cluster.root}/log")
    done = cluster.run("sinfo", "-h", "-N", "-o", "%N %T", check=False)
    # One line per node and partition: a node of two partitions is listed twice.
    states = dict(line.split() for line in done.stdout.splitlines() if line.strip())
    return done.returncode == 0 and len(states) == len(NODES) and set(states.values()) == {"idle"}


def _wait_for(ready: Any, seconds: float, message: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if ready():
            return
        time.sleep(0.2)
    raise RuntimeError(message)


def stop(cluster: Cluster) -> None:
    """Let the jobs end, then stop their leftover processes and every daemon, each by PID."""
    controller_alive = len(cluster.processes) > 1 and cluster.processes[1].poll() is None
    if controller_alive:
        with suppress(RuntimeError, subprocess.TimeoutExpired):
            cluster.clear_jobs(seconds=15)  # steps end cleanly while their slurmd still runs
    daemons = {p.pid for p in cluster.processes}
    for pid in _job_pids(cluster, daemons):
        _signal(pid, signal.SIGKILL)
    for process in reversed(cluster.processes):
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    for process in cluster.processes:
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    for pid in _job_pids(cluster, daemons):  # steps that started while the daemons stopped
        _signal(pid, signal.SIGKILL)


def _job_pids(cluster: Cluster, daemons: set[int]) -> list[int]:
    """Processes of this cluster's jobs: each slurmstepd of its slurmd (a `slurmstepd:`
    process carrying this cluster's SLURM_CONF, which it inherits from the slurmd we started),
    and every descendant of one (the batch script, its payload). Nothing else, however it
    names the cluster: a user's own command run with its SLURM_CONF (an `squeue`, a `tail` of
    its log) is not ours to end. Not the daemons' own helpers (slurmctld's slurmscriptd):
    they end with their daemon, which, had they been killed first, waits ten seconds."""
    marker = f"SLURM_CONF={cluster.conf}".encode()
    children: dict[int, list[int]] = {}
    steps: list[int] = []
    for entry in Path("/proc").iterdir():
        pid = int(entry.name) if entry.name.isdigit() else 0
        if pid in (0, os.getpid()) or pid in daemons:
            continue
        with suppress(OSError, ValueError, IndexError):
            children.setdefault(_parent(entry), []).append(pid)
            step = (entry / "cmdline").read_bytes().startswith(b"slurmstepd:")
            if step and marker in (entry / "environ").read_bytes().split(b"\0"):
                steps.append(pid)
    found, todo = [], list(steps)
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += [c for c in children.get(pid, ()) if c not in daemons]
    return found


def _parent(entry: Path) -> int:
    """The parent PID in /proc/PID/stat (after the parenthesised command name)."""
    return int((entry / "stat").read_text().rpartition(")")[2].split()[1])


def _signal(pid: int, sig: signal.Signals) -> None:
    with suppress(ProcessLookupError):
        os.kill(pid, sig)


@contextmanager
def running(root: Path, hold_partitions: Iterable[str] = ()) -> Iterator[Cluster]:
    """A started cluster for the `with` block; stopped afterwards whatever happens."""
    cluster = start(root, hold_partitions=hold_partitions)
    try:
        yield cluster
    finally:
        stop(cluster)
