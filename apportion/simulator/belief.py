"""Truth and belief: what the policy is told of throughputs, apart from what the jobs do.

The trace's throughputs are the truth, and the enactment runs jobs at them. With
`SimConfig.throughput_noise` σ > 0 the policy is sent a belief instead: every job's rate alone
on every GPU type, and both members' rates of every pair, times a seeded lognormal error
e^(σz), z ~ N(0, 1) drawn per job (per pair) and type, so the ratios between types are off as
well. With `SimConfig.noise_source` `gavel` the error is Gavel's instead: the ratio of its
measured table to its oracle table (`physical_cluster_throughputs.json` ÷
`simulation_throughputs.json`) for the job's type (workload class and scale factor) on each
GPU type, and for each member of a pair (1 for a job whose type neither table has, or where
either says 0); the estimator then takes σ = the estimator's `reference_sigma` (0.4, from the
same two tables). `SimConfig.estimator` says what happens to the belief:

- `oracle`: the policy is told the truth (the noise is not applied);
- `none`: the first belief, never updated;
- `online`: the first belief is the job's profile at arrival (relative error σ), and every
  interval it ran is an observation of its rate on that type (beside that partner), both
  folded in by the estimator (`estimation.alone`, docs/ESTIMATION.md): when the bundled
  reference table has the trace's GPU types and the job's scale factor, its rates alone start
  from the reference types' spread, whose correlation across GPU types lets a rate seen on one
  type correct the others; otherwise (and for pairs) each rate on its own, in log space, the
  profile as the prior.

The error of the belief (the mean |log(believed ÷ true)| over the rates the policy is sent) is
recorded at every call; the summary has its first, mean and last value.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np

from apportion.estimation.alone import Alone, alone_posterior
from apportion.estimation.document import EstimateOptions, JobSpec
from apportion.estimation.reference import Group, bundled
from apportion.refdata import SOURCE
from apportion.refdata.gavel import GavelTable
from apportion.refdata.synthetic import load_gavel_table
from apportion.simulator.state import JobStates, Running, Step

if TYPE_CHECKING:
    from apportion.simulator.config import SimConfig

ESTIMATORS = ("oracle", "none", "online")
_DEFAULTS = EstimateOptions.model_validate({})
#: Weight of one second of observation in log space: 1 / (σ_obs² · τ).
PER_SECOND = 1.0 / (_DEFAULTS.observation_sigma**2 * _DEFAULTS.observation_seconds)

Key = tuple[str, str, str | None]  # job, GPU type, partner (None: alone)


@dataclass
class Belief:
    """The policy's view of a trace's throughputs (see the module's docstring)."""

    table: JobStates
    sigma: float
    online: bool
    seed: int
    seen: dict[Key, tuple[float, float]] = field(default_factory=dict)  # steps, seconds
    errors: list[float] = field(default_factory=list)
    gavel: bool = False  # the error is Gavel's measured ÷ oracle ratio, not a lognormal draw
    _alone: dict[str, tuple[float, Alone]] = field(default_factory=dict)

    def view(self, document: dict[str, Any]) -> dict[str, Any]:
        """The snapshot document with believed throughputs (jobs and job pairs)."""
        gaps: list[float] = []
        jobs = []
        for job in document["jobs"]:
            rates = {g: self._believed(job["id"], None, g, r) for g, r in job["throughput"].items()}
            gaps += [abs(np.log(rates[g] / r)) for g, r in job["throughput"].items() if r > 0]
            jobs.append({**job, "throughput": rates})
        out = {**document, "jobs": jobs}
        if "job_pairs" in document:
            out["job_pairs"] = [self._pair(p) for p in document["job_pairs"]]
        self.errors.append(float(np.mean(gaps)) if gaps else 0.0)
        return out

    def observe(self, step: Step, running: Running, partner: dict[int, str]) -> None:
        """Each job that ran in the interval, at its true rate on its type (beside its
        partner): steps done over seconds held, for the online estimator."""
        held = step.end - step.start
        if not self.online or held <= 0:
            return
        table = self.table
        for j, k, rate in zip(
            running.jobs.tolist(), running.type.tolist(), running.rate.tolist(), strict=True
        ):
            if rate > 0:
                key = (table.ids[j], table.types[k], partner.get(j))
                steps, seconds = self.seen.get(key, (0.0, 0.0))
                self.seen[key] = (steps + rate * held, seconds + held)

    def summary(self) -> dict[str, float]:
        if not self.errors:
            return {}
        return {
            "estimate_error_first": self.errors[0],
            "estimate_error_mean": float(np.mean(self.errors)),
            "estimate_error_last": self.errors[-1],
        }

    def _believed(self, job: str, partner: str | None, gpu: str, truth: float) -> float:
        if truth <= 0:
            return truth
        profile = float(np.exp(np.log(truth) + self._error(job, partner, gpu)))
        if not self.online or self.sigma == 0:
            return profile
        if partner is None:
            alone = self._posterior(job)
            if alone is not None:
                return alone[0].rate(alone[1].gpu_types.index(gpu))
        steps, seconds = self.seen.get((job, gpu, partner), (0.0, 0.0))
        if seconds == 0:
            return profile
        # One rate on its own: the profile (variance σ²) and the rate seen, precision-weighted.
        precision, weight = 1.0 / self.sigma**2, seconds * PER_SECOND
        mean = (np.log(profile) * precision + np.log(steps / seconds) * weight) / (
            precision + weight
        )
        return float(np.exp(mean))

    def _posterior(self, job: str) -> tuple[Alone, Group] | None:
        """The estimator's posterior of the job's rates alone (None: the reference lacks its
        scale factor or the trace's GPU types), recomputed when it was seen again."""
        group = bundled().group(int(self.table.scale[self.table.index[job]]))
        if group is None or not set(self.table.types) <= set(group.gpu_types):
            return None
        mine = {k: v for k, v in self.seen.items() if k[0] == job and k[2] is None}
        held = sum(seconds for _, seconds in mine.values())
        cached = self._alone.get(job)
        if cached is None or cached[0] != held:
            thr = self.table.thr[self.table.index[job]]
            profiles = {
                g: float(t * np.exp(self._error(job, None, g)))
                for g, t in zip(self.table.types, thr.tolist(), strict=True)
                if t > 0
            }
            spec = JobSpec(id=job, scale_factor=group.scale_factor, profiles=profiles)
            options = _DEFAULTS.model_copy(update={"profile_sigma": self.sigma})
            cached = (held, alone_posterior(spec, group, options, mine))
            self._alone[job] = cached
        return cached[1], group

    def _pair(self, pair: dict[str, Any]) -> dict[str, Any]:
        a, b = str(pair["a"]), str(pair["b"])
        rates = {
            g: [self._believed(a, b, g, ra), self._believed(b, a, g, rb)]
            for g, (ra, rb) in pair["throughput"].items()
        }
        return {**pair, "throughput": rates}

    def _error(self, job: str, partner: str | None, gpu: str) -> float:
        """The log of the factor the first belief is off by."""
        if not self.gavel:
            return self.sigma * self._z(job, partner, gpu)
        kinds = [self._kind(job)] + ([] if partner is None else [self._kind(partner)])
        return gavel_errors().get((*kinds, gpu), 0.0)

    def _kind(self, job: str) -> tuple[str, int]:
        spec = self.table.trace.jobs[self.table.index[job]]
        return (spec.workload_class or "", spec.scale_factor)

    def _z(self, job: str, partner: str | None, gpu: str) -> float:
        # One draw per (seed, job, partner, type), whatever the order jobs are seen in.
        words = [self.seed, zlib.crc32(job.encode()), zlib.crc32((partner or "").encode())]
        words.append(zlib.crc32(gpu.encode()))
        return float(np.random.default_rng(words).standard_normal())


def belief_for(table: JobStates, config: SimConfig) -> Belief | None:
    """The belief a run's settings ask for (checked by `SimConfig`); None when the policy is
    told the truth."""
    if config.estimator == "oracle":
        return None
    gavel = config.noise_source == "gavel"
    sigma = _DEFAULTS.reference_sigma if gavel else config.throughput_noise
    return Belief(table, sigma, config.estimator == "online", config.seed, gavel=gavel)


@cache
def gavel_errors() -> dict[tuple[Any, ...], float]:
    """log(measured ÷ oracle) by (job type, GPU type) and by (job type, partner type, GPU
    type) for the first's rate beside the second; cells where either table has 0 left out."""
    oracle = load_gavel_table()
    measured = GavelTable.from_compact(
        json.loads((SOURCE / "gavel_physical_throughputs.json").read_text())
    )
    out: dict[tuple[Any, ...], float] = {}
    for i, kind in enumerate(oracle.job_types):
        j = measured.job_types.index(kind)
        for g, gpu in enumerate(oracle.gpu_types):
            o, m = oracle.isolated[i, g], measured.isolated[j, measured.gpu_types.index(gpu)]
            if o > 0 and m > 0:
                out[(kind, gpu)] = float(np.log(m / o))
    for (a, b), per in oracle.pairs.items():
        for gpu, (oa, ob) in per.items():
            ma, mb = measured.pairs[(a, b)][gpu]
            if oa > 0 and ma > 0:
                out[(a, b, gpu)] = float(np.log(ma / oa))
            if ob > 0 and mb > 0:
                out[(b, a, gpu)] = float(np.log(mb / ob))
    return out
