"""Enactment modes: how a policy's decision becomes GPUs held over time.

- `rounds` (Gavel): time fractions through the round mechanism, one round at a time;
- `leases` (Chronus): deadline admission lease by lease, with guarantees carried over;
- `placement` (DeepShare): event-driven starts on nodes, with contention slowdown.

Each enactor answers `decide(now, solve) -> Running` (who runs from `now`, where, how fast),
`length(now)` (when its decision expires) and `after(step, running)` (bookkeeping once time has
passed), and logs its policy calls in `calls`.
"""

from __future__ import annotations

from typing import Protocol

from apportion.simulator.clients import Decider
from apportion.simulator.config import Mode, SimConfig
from apportion.simulator.enact.common import CallLog, Holdings
from apportion.simulator.state import JobTable, Running, Step


class Enactor(Protocol):
    calls: CallLog
    holdings: Holdings

    def decide(self, now: float, solve: bool) -> Running: ...

    def length(self, now: float) -> float: ...

    def after(self, step: Step, running: Running) -> None: ...


def make_enactor(table: JobTable, decider: Decider, config: SimConfig) -> Enactor:
    mode = config.enactment
    if mode == Mode.LEASES:
        from apportion.simulator.enact.leases import LeaseEnactor

        return LeaseEnactor(table, decider, config)
    if mode == Mode.PLACEMENT:
        from apportion.simulator.enact.placement import PlacementEnactor

        return PlacementEnactor(table, decider, config)
    from apportion.simulator.enact.rounds import RoundsEnactor

    return RoundsEnactor(table, decider, config)
