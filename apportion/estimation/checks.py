"""What a request must agree with beyond its schema: the reference table's names (job types,
GPU types, scale factors) and its own jobs; every error names its field from the root."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from apportion.estimation.document import EstimateInput, JobSpec
from apportion.estimation.reference import Reference
from apportion.solver.errors import FieldError, did_you_mean

#: Jobs of one scale factor whose every pair is estimated (`pairs: true`): 100 make 4,950
#: pairs (about a second, an answer of a few megabytes); beyond, `pairs: false`.
MAX_PAIRED_JOBS = 100


def job_errors(spec: JobSpec, ref: Reference, loc: tuple[str | int, ...]) -> list[FieldError]:
    """A job's scale factor, type, profiled GPU types and pair partners, against the table."""
    group = ref.group(spec.scale_factor)
    if group is None:
        sizes = ", ".join(str(s) for s in sorted(ref.groups))
        msg = f"no reference job type has scale factor {spec.scale_factor} (known: {sizes})"
        return [FieldError((*loc, "scale_factor"), msg)]
    errors = []
    if spec.job_type is not None and group.index(spec.job_type) is None:
        errors.append(_unknown((*loc, "job_type"), spec.job_type, group.names, "job type"))
    for gpu in spec.profiles:
        if gpu not in ref.gpu_types:
            errors.append(_unknown((*loc, "profiles", gpu), gpu, ref.gpu_types, "GPU type"))
    for i, pair in enumerate(spec.pair_profiles):
        if pair.gpu_type not in ref.gpu_types:
            where = (*loc, "pair_profiles", i, "gpu_type")
            errors.append(_unknown(where, pair.gpu_type, ref.gpu_types, "GPU type"))
        if group.index(pair.partner) is None:
            where = (*loc, "pair_profiles", i, "partner")
            errors.append(_unknown(where, pair.partner, group.names, "job type"))
    return errors


def request_errors(
    request: EstimateInput, ref: Reference, known: dict[str, JobSpec]
) -> list[FieldError]:
    """Every job against the table; observations of known jobs on known GPU types; no job
    listed twice; every pair only for a bounded number of jobs."""
    errors: list[FieldError] = []
    if request.pairs:
        sizes = Counter(spec.scale_factor for spec in known.values())
        if sizes and max(sizes.values()) > MAX_PAIRED_JOBS:
            msg = (
                f"every pair of {max(sizes.values())} jobs of one scale factor is too many "
                f"(at most {MAX_PAIRED_JOBS}); give pairs: false"
            )
            errors.append(FieldError(("pairs",), msg))
    seen: set[str] = set()
    for i, spec in enumerate(request.jobs):
        if spec.id in seen:
            errors.append(FieldError(("jobs", i, "id"), f"job {spec.id!r} is listed twice"))
        seen.add(spec.id)
        errors += job_errors(spec, ref, ("jobs", i))
    for i, seen_obs in enumerate(request.observations):
        loc: tuple[str | int, ...] = ("observations", i)
        if seen_obs.job not in known:
            errors.append(FieldError((*loc, "job"), f"unknown job {seen_obs.job!r}"))
        if seen_obs.partner is not None and seen_obs.partner not in known:
            msg = f"unknown job {seen_obs.partner!r}"
            errors.append(FieldError((*loc, "partner"), msg))
        if seen_obs.partner == seen_obs.job:
            errors.append(FieldError((*loc, "partner"), "a job cannot share with itself"))
        if seen_obs.gpu_type not in ref.gpu_types:
            where = (*loc, "gpu_type")
            errors.append(_unknown(where, seen_obs.gpu_type, ref.gpu_types, "GPU type"))
    return errors


def _unknown(loc: tuple[str | int, ...], given: str, names: Iterable[str], what: str) -> FieldError:
    return FieldError(loc, f"unknown {what} {given!r}" + did_you_mean(given, names))
