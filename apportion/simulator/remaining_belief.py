"""Truth and belief of remaining time, in lease mode (deadline admission).

The trace's durations are the truth: jobs run and finish at them, and deadlines are scored on
them. With `SimConfig.remaining_time_noise` σ > 0 the policy is told a belief instead: every
job's remaining work at full speed times a seeded lognormal error e^(σ z_j), z_j ~ N(0, 1) drawn
once per (seed, job) (a duration estimate that is off by the same factor all along, as a user's
or a predictor's is; the restore cost a held job still pays is known and is not scaled).

The margin is derived from σ, not a constant: the true remaining time is the believed one
times e^(−σ z_j), at most e^(σ q) of it with probability `level` (q the standard normal's
`level` quantile), so every job is sent

    remaining_time_uncertainty  δ = e^(σ q) − 1

and deadline admission plans each guarantee for E (1 + δ) (FORMULATIONS §6a). `level` None sends
no margin: the belief is taken as exact, which is what the cost of ignoring the error measures.
At σ = 0 the belief is the truth and δ = 0 (the oracle).

`online` (`SimConfig.remaining_time_estimator`): the error is the job's rate's, and the progress
seen while it runs is an observation of that rate, weighted as the throughput estimator weighs
one (`belief.PER_SECOND`: relative error 3 % over 360 s). After s seconds of progress the log
error is σ z · P₀ / (P₀ + w) and its standard deviation (P₀ + w)^(−1/2), with P₀ = 1/σ² and
w = s · PER_SECOND, and the job's margin is derived from that: large on arrival, a few percent
after a few minutes of running.

The run's summary has the belief's error (`remaining_time_error_mean`: the mean |log(believed ÷
true)| over the jobs sent, averaged over calls), the margin on arrival (`remaining_time_margin`)
and the mean margin sent (`remaining_time_margin_mean`). Baselines rank on the simulator's own
state, never on a snapshot: a run that would tell one a belief is refused.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

import numpy as np

from apportion.simulator.belief import PER_SECOND
from apportion.simulator.config import REMAINING_TIME_LEVEL, SimConfig
from apportion.simulator.state import JobStates

#: The snapshot's bound on `remaining_time_uncertainty`.
MAX_MARGIN = 10.0


def derived_margin(sigma: float, level: float | None) -> float:
    """δ = e^(σ q_level) − 1: the relative bound a lognormal error of σ stays within with
    probability `level` (0 without a level, or at σ = 0)."""
    if level is None or sigma == 0:
        return 0.0
    return min(math.expm1(sigma * NormalDist().inv_cdf(level)), MAX_MARGIN)


@dataclass
class RemainingBelief:
    """The policy's view of the jobs' remaining times (see the module's docstring)."""

    table: JobStates
    sigma: float
    seed: int
    level: float | None = REMAINING_TIME_LEVEL
    online: bool = False
    errors: list[float] = field(default_factory=list)
    margins: list[float] = field(default_factory=list)
    _z: dict[str, float] = field(default_factory=dict)

    def z(self, job: str) -> float:
        """The job's standard normal draw: its first belief is e^(σ z) times the truth."""
        z = self._z.get(job)
        if z is None:
            # One draw per (seed, job), whatever the order jobs are seen in.
            words = [self.seed, zlib.crc32(job.encode()), zlib.crc32(b"remaining_time")]
            z = self._z[job] = float(np.random.default_rng(words).standard_normal())
        return z

    def error(self, j: int) -> tuple[float, float]:
        """The log of the factor job j's remaining time is believed off by, and its standard
        deviation: σ z and σ, or (online) both shrunk by the progress seen so far."""
        log_error, sigma = self.sigma * self.z(self.table.ids[j]), self.sigma
        if self.online:
            table = self.table
            seen = (table.total[j] - table.remaining[j]) / max(float(table.thr[j].max()), 1e-300)
            prior = 1.0 / sigma**2
            # The rate seen is the truth: the belief moves towards it by the weights' ratio.
            posterior = prior + seen * PER_SECOND
            log_error, sigma = log_error * prior / posterior, posterior**-0.5
        return log_error, sigma

    def view(self, document: dict[str, Any]) -> dict[str, Any]:
        """The lease snapshot with believed remaining times and, with a level, the margins."""
        table = self.table
        jobs, gaps, margins = [], [], []
        for job in document["jobs"]:
            j = table.index[job["id"]]
            log_error, sigma = self.error(j)
            # A held job's remaining time includes the restore cost it still pays, known exactly.
            restore = float(table.delay_left[j]) if "held_until" in job else 0.0
            work = job["remaining_time"] - restore
            entry = {**job, "remaining_time": work * math.exp(log_error) + restore}
            if self.level is not None:
                entry["remaining_time_uncertainty"] = derived_margin(sigma, self.level)
                margins.append(entry["remaining_time_uncertainty"])
            if work > 0:
                gaps.append(abs(log_error))
            jobs.append(entry)
        self.errors.append(float(np.mean(gaps)) if gaps else 0.0)
        self.margins.append(float(np.mean(margins)) if margins else 0.0)
        return {**document, "jobs": jobs}

    def summary(self) -> dict[str, float]:
        return {
            "remaining_time_noise": self.sigma,
            "remaining_time_margin": derived_margin(self.sigma, self.level),
            "remaining_time_margin_mean": float(np.mean(self.margins)) if self.margins else 0.0,
            "remaining_time_error_mean": float(np.mean(self.errors)) if self.errors else 0.0,
        }


def remaining_belief_for(table: JobStates, config: SimConfig) -> RemainingBelief | None:
    """The belief a lease run asks for; None when the policy is told the truth."""
    if config.remaining_time_noise == 0:
        return None
    online = config.remaining_time_estimator == "online"
    return RemainingBelief(
        table, config.remaining_time_noise, config.seed, config.remaining_time_level, online
    )
