"""What a round is made of: the pair shares it is given and the assignments it returns.

Pure data, no behaviour: the simulator and the HTTP layer build and read these.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class PairShare:
    """Two jobs that share the same GPUs for `allocation[k]` of the time on type k (space
    sharing, FORMULATIONS §1c; a result's `summary.pair_allocations` entry).

    `received[k]` is the seconds the two have already run *together* on type k. That time is
    also part of each member's own `received[k]` (a member held the GPUs for the whole round),
    so it is at most either member's received time on k.
    """

    a: str
    b: str
    allocation: Mapping[str, float]
    received: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Assignment:
    """One job in the next round: its GPU type, and GPUs per node (`placement`).

    - kept: the job holds exactly the GPUs it held last round (a lease extension: no preemption)
    - priority: the priority its (job or pair, type) entry was served at: under Gavel's rule
      `math.inf` when it had received no time on that type yet; under the deficit rule the
      seconds it would be behind its share after this round
    - shared_with: the other member when the job runs as a space-sharing pair (both members
      then have the same placement)
    """

    job: str
    gpu_type: str
    placement: dict[str, int]
    kept: bool
    priority: float
    shared_with: str | None = None


@dataclass(frozen=True)
class Round:
    """The next round.

    - assignments: in the order they were served (priority order); a pair's members follow
      each other
    - idle: GPUs left free per GPU type (every type of the snapshot)
    - waiting: jobs with time allocated that do not run this round, in snapshot order, with
      `reasons[job]` saying why
    - elapsed: the T the priorities were computed with (seconds)
    """

    assignments: tuple[Assignment, ...]
    idle: dict[str, int]
    waiting: tuple[str, ...]
    reasons: dict[str, str] = field(default_factory=dict)
    elapsed: float = 0.0

    def assignment(self, job: str) -> Assignment | None:
        """The job's assignment, or None when it does not run."""
        for a in self.assignments:
            if a.job == job:
                return a
        return None
