"""Enactment modes: how a policy's decision becomes GPUs held over time.

- `rounds` (Gavel): time fractions through the round mechanism, one round at a time;
- `leases` (Chronus): deadline admission lease by lease, with guarantees carried over;
- `placement` (DeepShare): event-driven starts on nodes, with contention slowdown;
- `schedule` (Tiresias): event-driven, the policy names every job that runs and its nodes;
  a running job it leaves out is preempted.

Each enactor answers `decide(now, solve) -> Running` (who runs from `now`, where, how fast),
`length(now)` (when its decision expires) and `after(step, running)` (bookkeeping once time has
passed), and logs its policy calls in `calls`. It also says how the engine should drive it:
`event_driven` (decisions also at arrivals and completions), `asks_every_decision` (the policy
is asked at every decision point, not only when a trigger fires) and `idle_patience` (decision
points an idle cluster waits before the clock jumps to the next arrival: a lease policy may hold
GPUs back for a reserved slot).
"""

from __future__ import annotations

from typing import Protocol

from apportion.simulator.clients import Decider
from apportion.simulator.config import (
    CALL_TIME_LIMIT,
    PLACEMENT_POLICIES,
    SCHEDULE_POLICIES,
    Mode,
    SimConfig,
)
from apportion.simulator.enact.common import CallLog, Holdings
from apportion.simulator.state import JobStates, Running, Step


class Enactor(Protocol):
    calls: CallLog
    holdings: Holdings
    event_driven: bool
    asks_every_decision: bool
    idle_patience: int

    def decide(self, now: float, solve: bool) -> Running: ...

    def length(self, now: float) -> float: ...

    def after(self, step: Step, running: Running) -> None: ...


def policy_options(config: SimConfig, baseline: bool, table: JobStates) -> dict[str, object]:
    """The options the simulated policy is called with: the configuration's, plus what an
    enactment mode tells its policy unless told otherwise. A lease policy estimates its leases
    with the checkpoint cost the simulation charges. A placement policy gets the shapes the
    trace's placement rules allow, the restart cost the simulation charges, and a time limit
    per call (`CALL_TIME_LIMIT`: a run asks it hundreds of times). A Tiresias policy weighs its
    preemptions with the checkpoint cost the simulation charges. Every policy's limits count
    work, not wall time (`clock: "work"`), on one solver thread (a solver's default is a share of
    the machine's cores): a run is a function of its trace, policy, options and seed, the same
    on an idle machine and a loaded one, on a small machine and a large one."""
    options = dict(config.options)
    if baseline:
        return options
    options.setdefault("clock", "work")
    options.setdefault("threads", 1)
    if config.enactment == Mode.LEASES and "overhead_seconds" not in options:
        options["overhead_seconds"] = config.preemption_seconds
    if config.enactment == Mode.PLACEMENT and config.policy in PLACEMENT_POLICIES:
        rules = table.trace.rules
        if rules is not None and "shapes" not in options:
            from apportion.simulator.enact.rules import shapes_by_demand

            options["shapes"] = {
                str(demand): [list(s) for s in shapes]
                for demand, shapes in shapes_by_demand(table, rules).items()
            }
        options.setdefault("restart_seconds", config.preemption_seconds)
        options.setdefault("time_limit", CALL_TIME_LIMIT)
    if config.policy in SCHEDULE_POLICIES and "preemption_cost" not in options:
        options["preemption_cost"] = config.preemption_seconds
    return options


def make_enactor(table: JobStates, decider: Decider, config: SimConfig) -> Enactor:
    mode = config.enactment
    if mode == Mode.LEASES:
        from apportion.simulator.enact.leases import LeaseEnactor

        return LeaseEnactor(table, decider, config)
    if mode == Mode.PLACEMENT:
        from apportion.simulator.enact.placement import PlacementEnactor

        return PlacementEnactor(table, decider, config)
    if mode == Mode.SCHEDULE:
        from apportion.simulator.enact.schedule import ScheduleEnactor

        return ScheduleEnactor(table, decider, config)
    from apportion.simulator.enact.rounds import RoundsEnactor

    return RoundsEnactor(table, decider, config)
