"""Which part of a Slurm cluster the adapter manages: partitions, accounts, a job flag.

- partitions: the adapter schedules the GPUs of these partitions' nodes, and jobs in (or
  pending for) one of them; none given: every partition
- accounts: only jobs charged to one of these accounts; none given: every account
- flag: only jobs whose comment carries this word (`--comment="apportion,model=resnet50"`)

A job out of scope is not touched, not warned about and not counted; the GPUs it holds are
simply not there for the round. Scopes of several adapters must not overlap: each would move
the other's jobs.
"""

from __future__ import annotations

from dataclasses import dataclass

from apportion.adapters.slurm.mapping import comment_entries
from apportion.adapters.slurm.slurmcli import SlurmJob, SlurmNode


@dataclass(frozen=True)
class Scope:
    """The part of the cluster one adapter manages (empty: all of it)."""

    partitions: frozenset[str] = frozenset()
    accounts: frozenset[str] = frozenset()
    flag: str | None = None

    def covers(self, job: SlurmJob) -> bool:
        """The job is the adapter's to manage (or to name as left alone)."""
        if self.partitions and not self.partitions.intersection(job.partitions):
            return False
        if self.accounts and job.account not in self.accounts:
            return False
        return self.flag is None or self.flag in comment_entries(job.comment)

    def schedules(self, node: SlurmNode) -> bool:
        """The round may hand out this node's GPUs."""
        return not self.partitions or bool(self.partitions.intersection(node.partitions))

    def describe(self) -> str:
        """One line for logs: `partitions gpu; accounts ml; flag apportion`, or `everything`."""
        parts = []
        if self.partitions:
            parts.append(f"partitions {','.join(sorted(self.partitions))}")
        if self.accounts:
            parts.append(f"accounts {','.join(sorted(self.accounts))}")
        if self.flag:
            parts.append(f"flag {self.flag}")
        return "; ".join(parts) or "every job"
