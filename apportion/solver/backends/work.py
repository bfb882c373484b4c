"""Counted work: the clock of a solve whose answer must not depend on the machine.

A simulation asks a policy hundreds of times; with a wall-clock limit per call, what a call
finds depends on how busy the machine is, so the same run on an idle and a loaded machine
differs. Under `clock: "work"` a time limit is read in modelled seconds of counted work instead:
solver iterations and branch-and-bound nodes (and a policy's own search steps), each charged a
fixed number of work units, never a reading of the clock. Solvers are given the equivalent
iteration and node limits (HiGHS `simplex_iteration_limit`, `ipm_iteration_limit`,
`pdlp_iteration_limit`, `mip_max_nodes`, and a MILP stopped at a count of its progress checks;
Clarabel `max_iter`) and no time limit. The rates are of the order of a solver's speed on
the policies' models (a few thousand simplex iterations a second on the placement MILPs), so a
limit buys roughly as much search as its seconds did; a MILP's LP iterations between checks are
charged once it stops, so its wall time can run past the seconds named. They are constants: the
same request gets the same answer on every machine and under any load; the wall time each call
took is still reported beside.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Work units one modelled second buys.
UNITS_PER_SECOND = 5_000.0
#: The cost of each counted step, in work units.
SIMPLEX_ITERATION = 1.0
IPM_ITERATION = 50.0
PDLP_ITERATION = 1.0
MIP_NODE = 20.0
#: A MILP's progress check (HiGHS's interrupt callback, made at fixed points of its search).
MIP_CHECK = 100.0
#: One step of a policy's own search (a start tried, a candidate scored) between solves.
SEARCH_STEP = 1.0


@dataclass
class WorkClock:
    """The work a request has done so far, in units."""

    units: float = 0.0

    def seconds(self) -> float:
        """The modelled seconds that work stands for."""
        return self.units / UNITS_PER_SECOND

    def charge(self, units: float) -> None:
        self.units += units


def steps(units: float, cost: float, least: int = 1) -> int:
    """How many steps of `cost` units `units` pays for (at least `least`)."""
    return max(int(units // cost), least)
