"""Each group's explanation from its duals: the code, the rows and a short sentence.

Computed once per group of identical jobs, with every test vectorized over (groups × types);
only the sentences are put together in Python, from plain lists.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from apportion.solver.arraytypes import BoolArray, FloatArray
from apportion.solver.explain.codes import Reason

#: Reduced costs below this fraction of the largest in the stage read as 0 (round-off).
COST_TOLERANCE = 1e-7
#: A job "runs" on a type with at least this much of its time there.
RUNS = 1e-9


@dataclass(frozen=True, eq=False)
class JobFacts:
    """Per group and per type, what every job's sentence is made of."""

    names: list[str]
    level: FloatArray | None
    level_name: str
    bottleneck: BoolArray  # (groups,) share row holds in the level stage
    bottlenecks: int  # jobs held at the level
    floor: BoolArray  # (groups,) share row holds in the final stage
    full_time: BoolArray  # (groups,) time row holds in the final stage
    capacity_price: FloatArray  # (types,) final stage
    binding: BoolArray  # (types,) no idle GPU
    reduced: FloatArray  # (groups, types) per member, NaN where no column
    final_stage: str


@dataclass(frozen=True)
class GroupText:
    """What every job of one group shares, rows included: they are the model's, named by the
    group's label (with merge_identical, identical jobs share their first member's rows)."""

    code: str
    why: str
    rows: list[str]
    costs: dict[str, float]
    gains: dict[str, float]


def group_texts(
    facts: JobFacts, labels: list[str], x: FloatArray, gpus: FloatArray
) -> list[GroupText]:
    """One `GroupText` per group, from its allocation row x (groups × types) and its gang."""
    reduced = facts.reduced
    usable = ~np.isnan(reduced)
    tol = COST_TOLERANCE * float(np.nanmax(np.abs(reduced), initial=0.0))
    costs = np.where(np.abs(reduced) <= tol, 0.0, reduced)
    gains = reduced + facts.capacity_price[None, :] * gpus[:, None]
    gains = np.where(np.abs(gains) <= tol, 0.0, gains)
    full = usable & facts.binding[None, :]
    worthless = usable & (x <= RUNS) & (costs < 0)
    wanted = np.where(full & (gains > 0), gains, -np.inf)
    best = np.argmax(wanted, axis=1)
    table = zip(
        usable.tolist(),
        full.tolist(),
        worthless.tolist(),
        costs.tolist(),
        gains.tolist(),
        best.tolist(),
        strict=True,
    )
    names = facts.names
    held = (facts.bottleneck | facts.floor).tolist()
    timed = facts.full_time.tolist()
    words = _Words(facts)
    out = []
    for g, (use, fill, cheap, cost, gain, top) in enumerate(table):
        full_names = [n for n, f in zip(names, fill, strict=True) if f]
        code, main = words.held(g, full_names)
        parts = [main]
        if full_names and code is not Reason.CAPACITY:
            parts.append(f"{_join(full_names)} capacity binding")
        if fill[top] and gain[top] > 0:
            parts.append(gain_clause(names[top], gain[top]))
        elif any(cheap):
            lost = [n for n, c in zip(names, cheap, strict=True) if c]
            parts.append(f"its {_join(lost)} time is worth less than it costs")
        rows = [f"share[{labels[g]}]"] if held[g] else []
        if timed[g]:
            rows.append(f"time[{labels[g]}]")
        rows += [f"capacity[{n}]" for n in full_names]
        kept = [k for k, u in enumerate(use) if u]
        out.append(
            GroupText(
                code,
                "; ".join(parts),
                rows,
                {names[k]: cost[k] for k in kept},
                {names[k]: gain[k] for k in kept},
            )
        )
    return out


class _Words:
    """The main clause per group, from plain lists (numpy scalars cost 10× per access)."""

    def __init__(self, facts: JobFacts) -> None:
        self.bottleneck = facts.bottleneck.tolist()
        self.floor = facts.floor.tolist()
        self.full_time = facts.full_time.tolist()
        self.level = None if facts.level is None else facts.level.tolist()
        self.level_name = facts.level_name
        self.final_stage = facts.final_stage
        others = facts.bottlenecks - 1
        self.others = f" with {others} other job{'s' if others != 1 else ''}" if others > 0 else ""

    def held(self, g: int, full: list[str]) -> tuple[str, str]:
        """The code and its words, in order of precedence."""
        level = "" if self.level is None else f" {self.level[g]:.3g}"
        if self.bottleneck[g]:
            return (
                Reason.BOTTLENECK,
                f"bottleneck: share row at {self.level_name}{level}{self.others}",
            )
        if self.full_time[g]:  # first: it is why the job gets no more, whatever else binds
            return Reason.FULL_TIME, "runs all of its time"
        if self.floor[g]:
            text = f"held at its {self.level_name}{level}: more would lower the {self.final_stage}"
            return Reason.FLOOR, text + " objective"
        if full:
            return Reason.CAPACITY, f"{_join(full)} capacity binding: no idle GPU it can use"
        return Reason.NOT_HELD, "nothing binds: other optima give it more or less at no cost"


def gain_clause(name: str, gain: float) -> str:
    """The last clause of a job's `why` where a fully used type would be worth `gain` per unit
    of its time to the objective (a table shows it in a column of its own)."""
    return f"would gain {gain:.2g} per unit of {name} time, none is free"


def _join(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
