"""What one simulation runs: the policy, how its decisions are enacted, and when it re-solves.

`SimConfig` is a frozen, picklable value (sweeps ship it to worker processes). Lengths are the
seed systems' (Gavel's 6-minute rounds, Chronus's 20-minute leases); how a round is served was
chosen by measurement (see `SimConfig`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from apportion.simulator.overhead import Overhead

#: Policies enacted lease by lease (Chronus), placement by placement (DeepShare), and decision
#: by decision with preemption (Tiresias); every other policy returns time fractions and is
#: enacted round by round (Gavel).
LEASE_POLICIES = frozenset({"deadline_admission", "chronus", "deadlines", "chronus_one_by_one"})
PLACEMENT_POLICIES = frozenset({"contention_placement", "deepshare", "contention"})
SCHEDULE_POLICIES = frozenset(
    {
        "tiresias_las",
        "tiresias_l",
        "discretized_2d_las",
        "2d_las_exact",
        "tiresias_gittins",
        "tiresias_g",
        "discretized_2d_gittins",
        "2d_gittins",
    }
)


#: Seconds a placement policy may take per call unless its options set `time_limit`: a
#: simulation asks it hundreds of times, and an answer stopped at the limit says so. Modelled
#: seconds of counted work (`clock: "work"`), never the wall clock's.
CALL_TIME_LIMIT = 1.0
#: One-sided coverage of the margin derived from a remaining-time noise (`remaining_belief`).
REMAINING_TIME_LEVEL = 0.999


class Contention(StrEnum):
    """How co-runners slow a job (traces with a contention table; `simulator.enact.contention`).

    - `current`: its worst co-runner now, recomputed whenever a co-runner starts or leaves;
    - `reference`: DeepShare's simulator: the worst co-runner's throughput ratio, floored at
      0.35, and a ratio that never recovers while the job keeps running (it is reset only
      when the job is placed again: started, restarted after a preemption, or moved).
    """

    CURRENT = "current"
    REFERENCE = "reference"


class Mode(StrEnum):
    AUTO = "auto"
    ROUNDS = "rounds"
    LEASES = "leases"
    PLACEMENT = "placement"
    SCHEDULE = "schedule"


#: Gavel's `minimum_time_between_allocation_resets`: seconds its scheduler waits after one
#: allocation before an arrival or a completion may trigger the next.
GAVEL_RESET_SECONDS = 1920.0


@dataclass(frozen=True)
class Resolve:
    """When the policy is asked again: on arrivals, on completions, and/or every N decision
    points (rounds or leases; in placement mode every N × round_seconds).

    `interval`: an arrival or a completion triggers a solve only once this many seconds have
    passed since the last one (until then it stays pending). `backfill`: between solves, jobs
    the last allocation does not cover (they arrived since) run at priority 0 on GPUs its jobs
    leave free (`mechanism.backfill`; rounds mode). `gavel` is Gavel's rule: arrivals and
    completions, 1,920 s apart at least; as in Gavel's simulator, a job that arrived since
    the last solve runs nowhere until the next (no back-fill; add `backfill` for it).
    """

    arrivals: bool = True
    completions: bool = True
    every: int | None = None
    interval: float | None = None
    backfill: bool = False

    @classmethod
    def parse(cls, text: str) -> Resolve:
        """`"arrivals,completions,every:10"`, `"arrivals,interval:600,backfill"`, `"gavel"`;
        any subset, e.g. `"every:1"`."""
        parts = [p.strip() for p in text.split(",") if p.strip()]
        if not parts:
            raise ValueError("resolve: give at least one of arrivals, completions, every:N, gavel")
        if "gavel" in parts:
            parts = [p for p in parts if p != "gavel"]
            parts += ["arrivals", "completions", f"interval:{GAVEL_RESET_SECONDS:g}"]
        every, interval = None, None
        for part in parts:
            if part.startswith("every:"):
                every = _count(part)
            elif part.startswith("interval:"):
                interval = _seconds(part)
            elif part not in ("arrivals", "completions", "backfill"):
                raise ValueError(
                    f"resolve: unknown trigger {part!r}; use arrivals, completions, every:N, "
                    "interval:SECONDS, backfill or gavel"
                )
        events = "arrivals" in parts or "completions" in parts
        if every is None and not events:
            raise ValueError("resolve: give at least one of arrivals, completions, every:N")
        return cls(
            "arrivals" in parts, "completions" in parts, every, interval, "backfill" in parts
        )

    def __str__(self) -> str:
        named = (("arrivals", self.arrivals), ("completions", self.completions))
        parts = [name for name, on in named if on]
        if self.every:
            parts.append(f"every:{self.every}")
        if self.interval is not None:
            parts.append(f"interval:{self.interval:g}")
        if self.backfill:
            parts.append("backfill")
        return ",".join(parts)


def _count(part: str) -> int:
    count = part.removeprefix("every:")
    if not count.isdigit() or int(count) < 1:
        raise ValueError(f"resolve: {part!r}: N must be a whole number ≥ 1")
    return int(count)


def _seconds(part: str) -> float:
    text = part.removeprefix("interval:")
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds < float("inf"):
        raise ValueError(f"resolve: {part!r}: SECONDS must be a number ≥ 0")
    return seconds


@dataclass(frozen=True)
class SimConfig:
    """One simulation's settings.

    - policy, options: an apportion policy (any name or alias of `solve policies`) or a
      baseline of `simulator.baselines`, with its options as for `solve`
    - mode: how decisions are enacted; `auto` picks leases for deadline admission, placement for
      contention placement, schedule for the Tiresias policies, rounds otherwise
    - events: decisions also at every arrival and completion and when the policy's last answer
      goes stale (`revisit_after`), whatever the mode: no round or lease boundary delays a
      start (placement and schedule enactment are event-driven anyway)
    - round_rule, round_order: how a round serves the allocation (`mechanism.priority`): by
      default the deficit rule through Gavel's per-type queues, which on Gavel's physical trace
      and on Poisson traces of its job mix gave the lowest average JCT of the four combinations
      (docs, researchers/simulator.md, "Round defaults")
    - resolve: when to call the policy again (None: the policy's default, see `resolve_for`)
    - preemption_seconds: seconds of work lost by a job each time it (re)starts on GPUs other
      than the ones it held in the previous round or lease (checkpoint and restore); nothing
      when its lease is extended
    - overhead_model: `fixed` (`preemption_seconds` per move, first starts free) or `chronus`
      (Chronus's simulator: 30 + 30 log2 g seconds at every start, the first included); every
      enactment mode charges it alike (`simulator.overhead`)
    - http: base URL of a running apportion service (policy calls go to POST /v1/solve); None
      solves in process
    - max_time: stop at this simulated time (seconds from the trace's start); None = until
      every job that can finish has finished
    - call_seconds: in lease mode, how often the policy is asked (a caller that admits every
      few minutes between lease boundaries); None = as a deployment would: at every arrival,
      completion and lease boundary
    - entity_weights: entity → weight for hierarchical policies (1 for an entity not named)
    - job_series: also record every running job's progress in every interval
      (`SimulationResult.job_series`); off by default, as it grows with jobs × intervals
    - contention: how co-runners slow a job (`Contention`: `current` or DeepShare's
      `reference`), for traces with a contention table
    - snapshot_fields: fields added to every snapshot the policy is sent (e.g. Tiresias's
      `service_distribution`)
    - throughput_noise, estimator: what the policy believes of throughputs in rounds mode
      (`simulator.belief`): the truth (`oracle`), or the truth times a seeded lognormal error of
      σ = throughput_noise (`noise_source` `gavel`: Gavel's measured ÷ oracle ratio per job
      type instead), never updated (`none`) or learned from observed progress (`online`)
    - remaining_time_noise, remaining_time_level, remaining_time_estimator: what the policy
      believes of remaining times in lease mode (`simulator.remaining_belief`): the truth times
      a seeded lognormal error of σ = remaining_time_noise, with the margin e^(σ q) − 1 derived
      from it at one-sided coverage `remaining_time_level` sent as each job's
      `remaining_time_uncertainty` (None: no margin, the belief taken as exact); kept as it is
      (`none`) or tightened by the progress seen as the job runs (`online`)
    """

    policy: str = "max_min_fairness"
    options: Mapping[str, Any] = field(default_factory=dict)
    mode: Mode = Mode.AUTO
    round_seconds: float = 360.0
    round_rule: str = "deficit"
    round_order: str = "types"
    lease_seconds: float = 1200.0
    call_seconds: float | None = None
    resolve: Resolve | None = None
    preemption_seconds: float = 0.0
    overhead_model: str = "fixed"
    http: str | None = None
    max_time: float | None = None
    entity_weights: Mapping[str, float] = field(default_factory=dict)
    seed: int = 0
    job_series: bool = False
    contention: Contention = Contention.CURRENT
    events: bool = False
    snapshot_fields: Mapping[str, Any] = field(default_factory=dict)
    throughput_noise: float = 0.0
    estimator: str = "oracle"
    noise_source: str = "lognormal"
    remaining_time_noise: float = 0.0
    remaining_time_level: float | None = REMAINING_TIME_LEVEL
    remaining_time_estimator: str = "none"

    def __post_init__(self) -> None:
        if self.round_seconds <= 0 or self.lease_seconds <= 0:
            raise ValueError("round_seconds and lease_seconds must be positive")
        if self.call_seconds is not None and not 0 < self.call_seconds <= self.lease_seconds:
            raise ValueError("call_seconds must be positive and at most lease_seconds")
        if self.preemption_seconds < 0:
            raise ValueError("preemption_seconds must be ≥ 0")
        object.__setattr__(self, "mode", Mode(self.mode))
        self._check_belief()
        self.overhead  # noqa: B018 (an unknown model is an error now, not in a worker)
        try:
            object.__setattr__(self, "contention", Contention(self.contention))
        except ValueError:
            names = ", ".join(c.value for c in Contention)
            raise ValueError(
                f"contention: unknown model {self.contention!r}; use {names}"
            ) from None
        # The engine needs them anyway; importing here keeps `import simulator.config` light.
        from apportion.mechanism.priority import Order, Rule

        if self.round_rule not in {r.value for r in Rule}:
            names = ", ".join(r.value for r in Rule)
            raise ValueError(f"round_rule: unknown rule {self.round_rule!r}; use one of {names}")
        if self.round_order not in {o.value for o in Order}:
            names = ", ".join(o.value for o in Order)
            raise ValueError(f"round_order: unknown order {self.round_order!r}; use one of {names}")

    @property
    def overhead(self) -> Overhead:
        """What each (re)start costs, for every enactment mode."""
        return Overhead.named(self.overhead_model, self.preemption_seconds)

    def _check_belief(self) -> None:
        if self.estimator not in ("oracle", "none", "online"):
            raise ValueError(f"estimator: {self.estimator!r} is not one of oracle, none, online")
        if not 0 <= self.throughput_noise < float("inf"):
            raise ValueError("throughput_noise must be a number ≥ 0")
        if self.noise_source not in ("lognormal", "gavel"):
            raise ValueError(f"noise_source: {self.noise_source!r} is not lognormal or gavel")
        if self.estimator != "oracle" and self.enactment != Mode.ROUNDS:
            raise ValueError(
                f"estimator: a belief apart from the truth is simulated in rounds mode only "
                f"(policy {self.policy!r} is enacted in {self.enactment.value})"
            )
        self._check_remaining()

    def _check_remaining(self) -> None:
        if not 0 <= self.remaining_time_noise < float("inf"):
            raise ValueError("remaining_time_noise must be a number ≥ 0")
        level = self.remaining_time_level
        if level is not None and not 0.5 <= level < 1:
            raise ValueError("remaining_time_level must be at least 0.5 and below 1, or None")
        if self.remaining_time_estimator not in ("none", "online"):
            raise ValueError(
                f"remaining_time_estimator: {self.remaining_time_estimator!r} is not none or online"
            )
        if self.remaining_time_noise and self.enactment != Mode.LEASES:
            raise ValueError(
                f"remaining_time_noise: remaining times are believed apart from the truth in "
                f"leases mode only (policy {self.policy!r} is enacted in "
                f"{self.enactment.value})"
            )

    @property
    def enactment(self) -> Mode:
        """The mode actually used: `auto` resolved from the policy."""
        if self.mode != Mode.AUTO:
            return self.mode
        if self.policy in LEASE_POLICIES:
            return Mode.LEASES
        if self.policy in PLACEMENT_POLICIES:
            return Mode.PLACEMENT
        if self.policy in SCHEDULE_POLICIES:
            return Mode.SCHEDULE
        return Mode.ROUNDS

    def for_rules(self, trace: str, rules: bool) -> SimConfig:
        """This configuration on a trace that does (`rules`) or does not state placement rules:
        only placement mode places jobs node by node, so `auto` picks it for every policy
        there, and rounds or leases are refused (their mechanisms place gangs their own way)."""
        if not rules:
            return self
        if self.mode == Mode.AUTO:
            return replace(self, mode=Mode.PLACEMENT)
        if self.mode != Mode.PLACEMENT:
            raise ValueError(
                f"mode {self.mode.value}: trace {trace!r} states placement rules (jobs span "
                "nodes as profiled) that only placement mode obeys; use mode auto or placement"
            )
        return self

    def resolve_for(self, baseline: bool) -> Resolve:
        """Baselines re-rank every round (their priorities move with attained service);
        optimization policies re-solve when the set of jobs changes, as Gavel does."""
        if self.resolve is not None:
            return self.resolve
        return Resolve(True, True, 1) if baseline else Resolve(True, True, None)

    def describe(self) -> dict[str, Any]:
        out = {
            "policy": self.policy,
            "options": dict(self.options),
            "mode": self.enactment.value,
            "round_seconds": self.round_seconds,
            "round_rule": self.round_rule,
            "round_order": self.round_order,
            "lease_seconds": self.lease_seconds,
            "call_seconds": self.call_seconds,
            "resolve": str(self.resolve) if self.resolve else "default",
            "preemption_seconds": self.preemption_seconds,
            "overhead_model": self.overhead_model,
            "http": self.http,
            "seed": self.seed,
            "contention": self.contention.value,
            "events": self.events,
        } | (
            {
                "throughput_noise": self.throughput_noise,
                "noise_source": self.noise_source,
                "estimator": self.estimator,
            }
            if self.estimator != "oracle"
            else {}
        )
        if self.remaining_time_noise:
            out |= {
                "remaining_time_noise": self.remaining_time_noise,
                "remaining_time_level": self.remaining_time_level,
                "remaining_time_estimator": self.remaining_time_estimator,
            }
        return out
