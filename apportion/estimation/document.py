"""The estimate as a document: what `POST /v1/estimate` takes and gives, and what a caller
keeps between rounds and sends back (the service keeps nothing, as with the Slurm adapter's
ledger). The document holds the evidence (each job's description and profiles, the progress
observed so far, summed per job, GPU type and co-runner) and the estimates computed from it;
the estimates are a function of the reference table and the evidence only, so sending the
document back with new observations gives the same answer as sending all evidence at once.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictFloat

from apportion.solver.snapshot.types import Name, NonNegative, Positive, PositiveCount, Strict

VERSION: Literal[1] = 1
Sigma = Annotated[StrictFloat, Field(gt=0, le=10, allow_inf_nan=False)]
Level = Annotated[StrictFloat, Field(gt=0, lt=1, allow_inf_nan=False)]


class PairProfile(Strict):
    """Steps/s measured while the job shared a GPU type with a reference job type."""

    partner: Name = Field(description="The reference job type it ran beside (its model name).")
    gpu_type: Name
    throughput: tuple[NonNegative, NonNegative] = Field(
        description="This job's steps/s and the reference job's, together."
    )


class JobSpec(Strict):
    """A job to estimate: its reference type when known, and what was profiled."""

    id: Name
    job_type: Name | None = Field(
        default=None,
        description="A reference job type's model name, when the job is one (its table row is "
        "the prior); else the job is new and its rows are estimated.",
    )
    scale_factor: PositiveCount = 1
    profiles: dict[Name, NonNegative] = Field(
        default_factory=dict, description="GPU type → steps/s measured alone."
    )
    pair_profiles: list[PairProfile] = Field(default_factory=list)


class Observation(Strict):
    """Progress seen while a job held a GPU type: steps done over seconds held."""

    job: Name
    gpu_type: Name
    partner: Name | None = Field(
        default=None, description="The job it shared the GPUs with (space sharing), or none."
    )
    steps: NonNegative
    seconds: Positive


class EstimateOptions(Strict):
    """The noise model; the defaults and where they come from are in docs/ESTIMATION.md."""

    observation_sigma: Sigma = Field(
        default=0.03, description="Relative error of the rate seen over `observation_seconds`."
    )
    observation_seconds: Positive = 360.0
    profile_sigma: Sigma = Field(default=0.03, description="Relative error of one profile.")
    reference_sigma: Sigma = Field(
        default=0.4, description="How far a named type's row may be from the reference table (log)."
    )
    level: Level = Field(default=0.95, description="Coverage of each cell's [low, high].")
    suggestions: Annotated[int, Field(ge=0, le=20)] = Field(
        default=3, description="Pairs to profile next, suggested per new job."
    )


class Cell(BaseModel):
    """One estimated throughput: the mean, its relative standard deviation, an interval."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    mean: float
    sigma: float = Field(description="Standard deviation ÷ mean (log scale for rates alone).")
    low: float
    high: float


class Suggestion(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    partner: str
    gpu_type: str


class JobEstimate(BaseModel):
    """A job's evidence and estimates."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    spec: JobSpec
    basis: Literal["reference", "measured", "prior"] = Field(
        description="reference: a named type's row; measured: completed from this job's "
        "measurements; prior: nothing measured yet (the reference types' spread)."
    )
    nearest: str | None = Field(description="The reference type whose row is closest.")
    throughput: dict[str, Cell] = Field(description="GPU type → steps/s alone.")
    suggested: list[Suggestion] = Field(
        default_factory=list, description="Pairs whose profile would tell the most."
    )


class PairEstimate(BaseModel):
    """Two jobs of one scale factor sharing GPUs: each one's steps/s, per GPU type."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    a: str
    b: str
    throughput: dict[str, tuple[Cell, Cell]]


class EstimateDocument(BaseModel):
    """What the caller keeps and sends back: evidence and estimates, versioned."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    version: Literal[1] = VERSION
    reference: Literal["gavel"] | dict[str, Any] = "gavel"
    options: EstimateOptions = Field(default_factory=lambda: EstimateOptions())
    jobs: dict[str, JobEstimate] = Field(default_factory=dict)
    pairs: list[PairEstimate] = Field(default_factory=list)
    observed: list[Observation] = Field(
        default_factory=list, description="Progress so far, summed per job, type and partner."
    )

    def throughputs(self) -> dict[str, dict[str, float]]:
        """Job id → GPU type → estimated steps/s alone (a snapshot's `throughput`)."""
        return {j: {g: c.mean for g, c in e.throughput.items()} for j, e in self.jobs.items()}

    def job_pairs(self) -> list[dict[str, Any]]:
        """A snapshot's `job_pairs`: the estimated steps/s of both members per GPU type,
        types where neither progresses left out."""
        out = []
        for pair in self.pairs:
            kept = {
                g: [a.mean, b.mean]
                for g, (a, b) in pair.throughput.items()
                if a.mean > 0 or b.mean > 0
            }
            if kept:
                out.append({"a": pair.a, "b": pair.b, "throughput": kept})
        return out


class EstimateInput(Strict):
    """The body of POST /v1/estimate: new jobs and observations, and the document so far."""

    estimate: EstimateDocument | None = Field(
        default=None, description="The document a previous call returned."
    )
    reference: Literal["gavel"] | dict[str, Any] | None = Field(
        default=None,
        description="`gavel` (bundled) or a table of the bundled file's form; default: the "
        "document's, else gavel.",
    )
    jobs: list[JobSpec] = Field(default_factory=list, description="Jobs to add or replace.")
    observations: list[Observation] = Field(default_factory=list)
    forget: list[Name] = Field(default_factory=list, description="Jobs to drop (finished).")
    pairs: bool = Field(
        default=True, description="Estimate every pair of jobs of one scale factor."
    )
    options: EstimateOptions | None = None
