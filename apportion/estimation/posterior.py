"""One call: the document so far, new jobs and observations in; every job's rates alone and
every pair's rates together out, each with its uncertainty, recomputed from all the evidence.

A job of a named reference type starts from its table row; a new job from the reference types'
spread, its co-location row completed from what it measured (`together`). A pair's rates come
from the new member's row against the other's type (against the type nearest the other's row
when both are new, with that row's spread added); a pair of two named types from the table,
updated by what the pair itself was seen to do."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
from pydantic import ValidationError

from apportion.estimation.alone import Alone, Seen, alone_posterior, log_cell, z_score
from apportion.estimation.checks import request_errors
from apportion.estimation.document import (
    Cell,
    EstimateDocument,
    EstimateInput,
    EstimateOptions,
    JobEstimate,
    JobSpec,
    Observation,
    PairEstimate,
)
from apportion.estimation.reference import Group, Reference, bundled, user_table
from apportion.estimation.together import Row, complete_row, nearest, suggest
from apportion.solver.errors import InputError

Basis = Literal["reference", "measured", "prior"]


def parse_estimate(data: EstimateInput | Mapping[str, Any]) -> EstimateInput:
    """A decoded body as a request, or `InputError` naming every bad field."""
    if isinstance(data, EstimateInput):
        return data
    try:
        return EstimateInput.model_validate(data)
    except ValidationError as exc:
        raise InputError.from_validation(exc, (), EstimateInput) from None


def estimate(data: EstimateInput | Mapping[str, Any]) -> EstimateDocument:
    """The estimate document for a request (`EstimateInput`); raises `InputError`."""
    request = parse_estimate(data)
    kept = request.estimate or EstimateDocument()
    spec = request.reference if request.reference is not None else kept.reference
    ref = _reference(spec)
    options = request.options or kept.options
    forget = set(request.forget)
    specs = {j: e.spec for j, e in kept.jobs.items() if j not in forget}
    specs.update({job.id: job for job in request.jobs})
    errors = request_errors(request, ref, specs)
    if errors:
        raise InputError(errors)
    old = [o for o in kept.observed if o.job in specs and (o.partner or o.job) in specs]
    seen = summed([*old, *request.observations])
    jobs, pairs = _estimates(list(specs.values()), ref, options, seen, request.pairs)
    return EstimateDocument(
        reference=spec, options=options, jobs=jobs, pairs=pairs, observed=observed(seen)
    )


def summed(observations: list[Observation]) -> Seen:
    """Steps and seconds summed per job, GPU type and partner (a rate's sufficient
    statistics under the noise model: the longer a job was seen, the surer its rate)."""
    out: Seen = {}
    for o in observations:
        steps, seconds = out.get((o.job, o.gpu_type, o.partner), (0.0, 0.0))
        out[(o.job, o.gpu_type, o.partner)] = (steps + o.steps, seconds + o.seconds)
    return out


def observed(seen: Seen) -> list[Observation]:
    return [
        Observation(job=j, gpu_type=g, partner=p, steps=steps, seconds=seconds)
        for (j, g, p), (steps, seconds) in seen.items()
    ]


def _reference(spec: str | dict[str, Any]) -> Reference:
    if isinstance(spec, str):
        return bundled()
    try:
        return user_table(dict(spec))
    except KeyError as exc:
        raise InputError.single(("reference",), f"not a reference table: no {exc} field") from None
    except (AttributeError, TypeError, ValueError, IndexError) as exc:
        raise InputError.single(
            ("reference",),
            "not a reference table: expected {gpu_types, job_types: [{model, scale_factor, "
            f"throughput: {{gpu_type: steps/s}}}}], pairs}} ({exc})",
        ) from None


def _estimates(
    specs: list[JobSpec], ref: Reference, options: EstimateOptions, seen: Seen, with_pairs: bool
) -> tuple[dict[str, JobEstimate], list[PairEstimate]]:
    z = z_score(options.level)
    jobs: dict[str, JobEstimate] = {}
    pairs: list[PairEstimate] = []
    for sf in sorted({s.scale_factor for s in specs}):
        group = ref.groups[sf]
        members = [s for s in specs if s.scale_factor == sf]
        state = _GroupState(group, members, options, seen)
        for s in members:
            jobs[s.id] = state.job(s, z)
        if with_pairs:
            pairs += [state.pair(a, b, z) for i, a in enumerate(members) for b in members[i + 1 :]]
    return jobs, pairs


class _GroupState:
    """The jobs of one scale factor: their posteriors alone and, for new jobs, their rows."""

    def __init__(
        self, group: Group, members: list[JobSpec], options: EstimateOptions, seen: Seen
    ) -> None:
        self.group, self.options, self.seen = group, options, seen
        self.alone: dict[str, Alone] = {
            s.id: alone_posterior(s, group, options, seen) for s in members
        }
        self.typed = {
            s.id: group.names.index(s.job_type) for s in members if s.job_type is not None
        }
        self.prior = group.prior() if len(self.typed) < len(members) else None
        self.rows: dict[str, Row] = {}
        for s in members:
            if s.id not in self.typed and self.prior is not None:
                self.rows[s.id] = complete_row(
                    s, self.alone[s.id], group, self.prior, self.typed, seen, options
                )
        self.kind = {
            j: (self.typed[j] if j in self.typed else nearest(self.rows[j].mean, group))
            for j in self.alone
        }

    def job(self, spec: JobSpec, z: float) -> JobEstimate:
        alone, row = self.alone[spec.id], self.rows.get(spec.id)
        cells = {
            gpu: log_cell(alone.rate(g), alone.sigma(g), z)
            for g, gpu in enumerate(self.group.gpu_types)
        }
        basis: Basis = "reference"
        if row is not None:
            basis = "measured" if (alone.measured or row.measured) else "prior"
        suggested = []
        if row is not None and len(row.measured) < self.options.suggestions:
            suggested = suggest(row, self.group, self.options)
        return JobEstimate(
            spec=spec,
            basis=basis,
            nearest=self.group.names[self.kind[spec.id]],
            throughput=cells,
            suggested=suggested,
        )

    def pair(self, a: JobSpec, b: JobSpec, z: float) -> PairEstimate:
        cells = {}
        for g, gpu in enumerate(self.group.gpu_types):
            first = self._side(a.id, b.id, g)
            second = self._side(b.id, a.id, g)
            cells[gpu] = (
                self._cell(a.id, b.id, g, first, z),
                self._cell(b.id, a.id, g, second, z),
            )
        return PairEstimate(a=a.id, b=b.id, throughput=cells)

    def _side(self, job: str, other: str, g: int) -> tuple[float, float, bool]:
        """The ratio `job` keeps beside `other` on GPU type g: mean, standard deviation, and
        whether the pair's own observations are still to be counted in."""
        group, sigma = self.group, self.options.reference_sigma
        if job in self.rows and other in self.typed:
            mean, sd = self.rows[job].ratio(group.suffers(g, self.typed[other]))
            return mean, sd, False
        if other in self.rows and job in self.typed:
            mean, sd = self.rows[other].ratio(group.inflicts(g, self.typed[job]))
            return mean, sd, False
        if job in self.rows:
            # Both new: Gavel's match, the other job read as its nearest reference type, with
            # the reference types' spread in that cell added for the mismatch.
            entry = group.suffers(g, self.kind[other])
            mean, sd = self.rows[job].ratio(entry)
            assert self.prior is not None
            return mean, float(np.hypot(sd, np.sqrt(self.prior[1][entry, entry]))), True
        ratio = float(group.ratio[self.typed[job], self.typed[other], g])
        return ratio, sigma * max(ratio, 0.05), True

    def _cell(
        self, job: str, other: str, g: int, side: tuple[float, float, bool], z: float
    ) -> Cell:
        mean, sd, direct = side
        rate = self.alone[job].rate(g)
        found = self.seen.get((job, self.group.gpu_types[g], other))
        if direct and found is not None and rate > 0:
            # The pair's own progress, as one more measurement of its ratio.
            steps, seconds = found
            o = self.options
            relative = o.observation_sigma * np.sqrt(o.observation_seconds / seconds)
            value = steps / seconds / rate
            noise = (relative * max(value, 0.05)) ** 2
            mean, sd = (
                (mean * noise + value * sd**2) / (noise + sd**2),
                float(np.sqrt(noise * sd**2 / (noise + sd**2))),
            )
        relative = float(np.hypot(sd / max(mean, 0.05), self.alone[job].sigma(g)))
        return log_cell(mean * rate, relative, z)
