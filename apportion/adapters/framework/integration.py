"""What a scheduler integration implements: one small required interface, and optional
capabilities the shared controller checks for.

The controller (`adapters.framework.controller`) owns everything that is the same on every
scheduler: the planners, the received-time ledger, which job a round starts, moves, keeps,
preempts or holds back, and the fail-safe rules. An integration only reads its scheduler and
says, per job, which of the scheduler's commands do that. Its types: `S`, what one `read`
returns (the scheduler's state at one moment), and `J`, its own job record (kept on each
`Job` as `job.source`).

Required (`Integration`): `name`, `read`, `seen`, `managed`, `start`, `stop`, `hold`, `enact`,
`show`. Optional, each checked with `isinstance` by the controller: `Checked` (refuse to run
on a scheduler it cannot drive), `Fits` (a job that cannot take a placement waits),
`Restarts` (a stopped job is started again only once the scheduler has it back in the queue),
`Identified` (what it manages, named for the one-instance lock) and `Closes` (resources to
release when the controller ends).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:
    from apportion.adapters.framework.view import Job, Managed

#: One command of the scheduler's, as the integration runs it (`("scontrol", "hold", "7")`).
Command = tuple[str, ...]
Commands = tuple[Command, ...]

S = TypeVar("S")
J = TypeVar("J")


class ReadError(RuntimeError):
    """The scheduler cannot be read now; the message says why (one line). The round then
    changes nothing."""


class EnactError(RuntimeError):
    """The scheduler refused a command; the message is the scheduler's own. That job's later
    commands are not run."""


class SetupError(RuntimeError):
    """The integration cannot run on this scheduler (unsupported version, a missing
    configuration); one line naming what and why."""


@dataclass(frozen=True)
class Seen:
    """A job the scheduler lists: the GPU type it runs on (None when it does not run) and when
    it started running (seconds since the epoch). The ledger counts received time from these."""

    id: str
    gpu_type: str | None = None
    started: float = 0.0


class Integration(Protocol[S, J]):
    """The required interface: every scheduler integration implements these."""

    #: Short name for logs and messages ("slurm").
    name: str

    def read(self) -> S:
        """The scheduler's state now; `ReadError` when it cannot be read."""
        ...

    def seen(self, state: S) -> Iterable[Seen]:
        """Every job the scheduler lists in `state`, managed or not."""
        ...

    def managed(self, state: S) -> Managed[J]:
        """The GPUs a round may hand out, the jobs the integration manages, and the GPU jobs
        it leaves alone with the reason."""
        ...

    def start(
        self, job: Job[J], gpu_type: str, placement: Mapping[str, int], rank: int
    ) -> Commands:
        """Commands that run `job` on `placement` (node → GPUs) of `gpu_type`; `rank` is its
        place in the round's serving order (0 first)."""
        ...

    def stop(self, job: Job[J]) -> Commands:
        """Commands that take a running job off its GPUs and back to the queue, where it waits
        until a round runs it again. Never a cancellation."""
        ...

    def hold(self, job: Job[J]) -> Commands:
        """Commands that keep a waiting job from starting outside the round; none when the
        scheduler would not start it by itself."""
        ...

    def enact(self, command: Command) -> None:
        """Run one command; `EnactError` with the scheduler's message when it is refused."""
        ...

    def show(self, command: Command) -> str:
        """One command as a dry run prints it (exactly what `enact` runs)."""
        ...


@runtime_checkable
class Checked(Protocol):
    """An integration that can tell, before the first round, that it cannot run here."""

    def check(self) -> None:
        """`SetupError` naming what is unsupported or missing."""
        ...


@runtime_checkable
class Fits(Protocol):
    """An integration whose jobs cannot take every placement (a request fixed per node)."""

    def misfit(self, job: Job[Any], placement: Mapping[str, int]) -> str | None:
        """Why `job` cannot run on `placement`, or None when it can."""
        ...


@runtime_checkable
class Restarts(Protocol):
    """An integration whose `stop` completes later: a moved job's start commands wait until
    the scheduler has it back in the queue."""

    def back_in_queue(self, jobs: set[str]) -> set[str]:
        """The jobs among `jobs` that may be started again now; `ReadError` when the
        scheduler cannot be read."""
        ...


@runtime_checkable
class Identified(Protocol):
    """An integration that can name the jobs it manages (scheduler, cluster, scope): two
    adapters naming the same cannot run at once (`framework.lock`)."""

    def identity(self) -> str:
        """One line, the same for every instance managing the same jobs; `SetupError` when
        the scheduler cannot be asked."""
        ...


@runtime_checkable
class Closes(Protocol):
    def close(self) -> None:
        """Release what the integration holds (connections, clients)."""
        ...
