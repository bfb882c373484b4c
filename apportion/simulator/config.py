"""What one simulation runs: the policy, how its decisions are enacted, and when it re-solves.

`SimConfig` is a frozen, picklable value (sweeps ship it to worker processes). Every field has
the default of the seed system it comes from: Gavel's 6-minute rounds, Chronus's 20-minute leases.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

#: Policies enacted lease by lease (Chronus) and placement by placement (DeepShare); every other
#: policy returns time fractions and is enacted round by round (Gavel).
LEASE_POLICIES = frozenset({"deadline_admission", "chronus", "deadlines"})
PLACEMENT_POLICIES = frozenset({"contention_placement", "deepshare", "contention"})


class Mode(StrEnum):
    AUTO = "auto"
    ROUNDS = "rounds"
    LEASES = "leases"
    PLACEMENT = "placement"


@dataclass(frozen=True)
class Resolve:
    """When the policy is asked again: on arrivals, on completions, and/or every N decision
    points (rounds or leases; in placement mode every N × round_seconds)."""

    arrivals: bool = True
    completions: bool = True
    every: int | None = None

    @classmethod
    def parse(cls, text: str) -> Resolve:
        """`"arrivals,completions,every:10"`; any subset, e.g. `"every:1"`."""
        parts = [p.strip() for p in text.split(",") if p.strip()]
        every = None
        for part in parts:
            if part.startswith("every:"):
                count = part.removeprefix("every:")
                if not count.isdigit() or int(count) < 1:
                    raise ValueError(f"resolve: {part!r}: N must be a whole number ≥ 1")
                every = int(count)
            elif part not in ("arrivals", "completions"):
                raise ValueError(
                    f"resolve: unknown trigger {part!r}; use arrivals, completions, every:N"
                )
        if not parts:
            raise ValueError("resolve: give at least one of arrivals, completions, every:N")
        return cls("arrivals" in parts, "completions" in parts, every)

    def __str__(self) -> str:
        named = (("arrivals", self.arrivals), ("completions", self.completions))
        parts = [name for name, on in named if on]
        if self.every:
            parts.append(f"every:{self.every}")
        return ",".join(parts)


@dataclass(frozen=True)
class SimConfig:
    """One simulation's settings.

    - policy, options: an apportion policy (any name or alias of `solve policies`) or a
      baseline of `simulator.baselines`, with its options as for `solve`
    - mode: how decisions are enacted; `auto` picks leases for deadline admission, placement for
      contention placement, rounds otherwise
    - resolve: when to call the policy again (None: the policy's default, see `resolve_for`)
    - preemption_seconds: seconds of work lost by a job each time it (re)starts on GPUs other
      than the ones it held in the previous round or lease (checkpoint and restore); nothing
      when its lease is extended
    - http: base URL of a running apportion service (policy calls go to POST /v1/solve); None
      solves in process
    - max_time: stop at this simulated time (seconds from the trace's start); None = until
      every job that can finish has finished
    - call_seconds: in lease mode, how often the policy is asked (a caller that admits every
      few minutes between lease boundaries); None = at every lease boundary
    - entity_weights: entity → weight for hierarchical policies (1 for an entity not named)
    - job_series: also record every running job's progress in every interval
      (`SimulationResult.job_series`); off by default, as it grows with jobs × intervals
    """

    policy: str = "max_min_fairness"
    options: Mapping[str, Any] = field(default_factory=dict)
    mode: Mode = Mode.AUTO
    round_seconds: float = 360.0
    round_rule: str = "gavel"
    lease_seconds: float = 1200.0
    call_seconds: float | None = None
    resolve: Resolve | None = None
    preemption_seconds: float = 0.0
    http: str | None = None
    max_time: float | None = None
    entity_weights: Mapping[str, float] = field(default_factory=dict)
    seed: int = 0
    job_series: bool = False

    def __post_init__(self) -> None:
        if self.round_seconds <= 0 or self.lease_seconds <= 0:
            raise ValueError("round_seconds and lease_seconds must be positive")
        if self.call_seconds is not None and not 0 < self.call_seconds <= self.lease_seconds:
            raise ValueError("call_seconds must be positive and at most lease_seconds")
        if self.preemption_seconds < 0:
            raise ValueError("preemption_seconds must be ≥ 0")
        object.__setattr__(self, "mode", Mode(self.mode))
        from apportion.mechanism.priority import (
            Rule,  # the engine needs it anyway; keep `import` light
        )

        if self.round_rule not in {r.value for r in Rule}:
            names = ", ".join(r.value for r in Rule)
            raise ValueError(f"round_rule: unknown rule {self.round_rule!r}; use one of {names}")

    @property
    def enactment(self) -> Mode:
        """The mode actually used: `auto` resolved from the policy."""
        if self.mode != Mode.AUTO:
            return self.mode
        if self.policy in LEASE_POLICIES:
            return Mode.LEASES
        if self.policy in PLACEMENT_POLICIES:
            return Mode.PLACEMENT
        return Mode.ROUNDS

    def resolve_for(self, baseline: bool) -> Resolve:
        """Baselines re-rank every round (their priorities move with attained service);
        optimization policies re-solve when the set of jobs changes, as Gavel does."""
        if self.resolve is not None:
            return self.resolve
        return Resolve(True, True, 1) if baseline else Resolve(True, True, None)

    def describe(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "options": dict(self.options),
            "mode": self.enactment.value,
            "round_seconds": self.round_seconds,
            "round_rule": self.round_rule,
            "lease_seconds": self.lease_seconds,
            "call_seconds": self.call_seconds,
            "resolve": str(self.resolve) if self.resolve else "default",
            "preemption_seconds": self.preemption_seconds,
            "http": self.http,
            "seed": self.seed,
        }
