"""Which throughputs a Slurm job has: its row of the operator's table (`framework.table`),
found by a job attribute.

The convention. A job's key is the `model=KEY` entry of its comment (`sbatch
--comment=model=resnet50`), else its job name (`sbatch -J resnet50`). Its row of the table gives
the job's throughput per GPU type. The comment may also carry `weight=W`, the job's priority
weight for the policy (default 1), and bare words used as flags (`--job-flag`). Comment entries
are separated by commas, semicolons or spaces: `--comment="apportion,model=resnet50,weight=2"`.
(Slurm's own priority is not used as the weight: the adapter sets it to enact each round.) A
job that asks for a GPU type (`--gres=gpu:v100:2`) can run only there; its row is cut down to
that type. A job that asks for GPUs untyped (`--gres=gpu:2`, `--gpus=2`) may run on any type of
its row: the round chooses. A job may report its progress as `steps=N` (its cumulative steps,
`reported_steps`): the adapter then learns its row from it (docs/ESTIMATION.md).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

from apportion.adapters.framework.table import keys_text
from apportion.adapters.slurm.slurmcli import SlurmJob

_ENTRY = re.compile(r"(?P<key>[A-Za-z_][\w.-]*)(?:=(?P<value>[^\s,;]*))?(?=[\s,;]|$)")


@dataclass(frozen=True)
class Mapped:
    """A job the adapter can schedule: its table key, throughputs and weight."""

    key: str
    throughput: dict[str, float]
    weight: float


@dataclass(frozen=True)
class Unmapped:
    """A job the adapter leaves alone, and why (one line for the operator)."""

    reason: str


def comment_entries(comment: str) -> dict[str, str]:
    """The entries of a job comment: `model=resnet50,weight=2,apportion` →
    `{"model": "resnet50", "weight": "2", "apportion": ""}`."""
    return {m["key"]: m["value"] or "" for m in _ENTRY.finditer(comment)}


def reported_steps(comment: str) -> float | None:
    """The `steps=N` a job reports (a finite non-negative number), else None: a value that is
    not one is taken as no report, never as a reason to leave the job alone."""
    value = comment_entries(comment).get("steps")
    try:
        steps = float(value) if value else -1.0
    except ValueError:
        return None
    return steps if math.isfinite(steps) and steps >= 0 else None


def map_job(job: SlurmJob, table: Mapping[str, Mapping[str, float]]) -> Mapped | Unmapped:
    """The job's key, throughputs and weight under the convention, or why it has none."""
    entries = comment_entries(job.comment)
    key, source = (entries["model"], "comment") if entries.get("model") else (job.name, "name")
    row = table.get(key)
    if row is None:
        return Unmapped(
            f"no throughput row for {key!r} (its {source}); set --comment=model=KEY with a "
            f"key of the table ({keys_text(table)})"
        )
    weight = entries.get("weight") or "1"
    try:
        value = float(weight)
    except ValueError:
        value = -1.0
    if not (math.isfinite(value) and value > 0):
        return Unmapped(f"comment weight={weight!r} is not a positive number")
    throughput = dict(row)
    if job.requested_type is not None:
        # A typed request cannot change type on 22.05: the job runs there or nowhere.
        throughput = {k: v for k, v in throughput.items() if k == job.requested_type}
    if not throughput:
        where = f"its requested type {job.requested_type}" if job.requested_type else "any type"
        return Unmapped(f"row {key!r} has no throughput on {where}")
    return Mapped(key, throughput, value)
