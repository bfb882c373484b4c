"""Elastic jobs (FORMULATIONS §9): a job that can run in any of several configurations — a GPU
type, a number of GPUs on a number of nodes, a batch size — each with what it achieves there.

A job says so in `elastic`, either with its `configurations` listed (each with its throughput in
samples/s and, where known, its goodput: throughput × statistical efficiency), or with the
goodput `model` its agent fitted (Pollux's throughput model per GPU type and the gradient
statistics), from which the policy computes a configuration for every node shape of the cluster
(then `nodes` are needed). `current` names the configuration it runs in now (GPU type, GPUs and,
when given, nodes); another one restarts it. Everything is optional, so v1 documents stay valid.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StrictFloat

from apportion.solver.snapshot.types import (
    Count,
    Flag,
    Name,
    NonNegative,
    Positive,
    PositiveCount,
    Strict,
)

#: γ of the throughput model: 1 (no overlap of compute and all-reduce) to 10 (full overlap).
Gamma = Annotated[StrictFloat, Field(ge=1.0, le=10.0, allow_inf_nan=False)]


class Configuration(Strict):
    """One way to run the job, and what it achieves there."""

    gpu_type: Name = Field(description="GPU type (a name of `gpu_types`).")
    gpus: PositiveCount = Field(description="GPUs the job holds (its data-parallel replicas).")
    nodes: PositiveCount = Field(
        default=1, description="Nodes the GPUs are spread over (1: all on one node)."
    )
    batch_size: PositiveCount | None = Field(
        default=None, description="Global batch size M = gpus × local_batch × (steps + 1)."
    )
    local_batch: PositiveCount | None = Field(
        default=None, description="Samples per GPU per micro-batch."
    )
    accumulation_steps: Count = Field(
        default=0, description="Gradient-accumulation micro-steps before each optimizer step."
    )
    throughput: NonNegative | None = Field(
        default=None, description="Samples per second in this configuration."
    )
    goodput: NonNegative | None = Field(
        default=None,
        description="Throughput × statistical efficiency of the batch size (samples/s counted "
        "at the efficiency of the initial batch); default: the throughput. 0 = cannot run so.",
    )

    @property
    def value(self) -> float:
        """The goodput, else the throughput (0 when neither is given)."""
        given = self.goodput if self.goodput is not None else self.throughput
        return float(given) if given is not None else 0.0


class TypeModel(Strict):
    """Pollux's throughput model of the job on one GPU type (seconds; FORMULATIONS §9a)."""

    alpha_c: NonNegative = Field(description="Constant compute time of a micro-batch.")
    beta_c: NonNegative = Field(description="Compute time per sample of a micro-batch.")
    alpha_n: NonNegative = Field(description="Constant all-reduce time across nodes.")
    beta_n: NonNegative = Field(description="All-reduce time per replica beyond 2, across nodes.")
    alpha_r: NonNegative = Field(description="Constant all-reduce time within a node.")
    beta_r: NonNegative = Field(description="All-reduce time per replica beyond 2, within a node.")
    gamma: Gamma = Field(description="Overlap of compute and all-reduce, 1 to 10.")
    min_local_batch: PositiveCount = Field(description="Smallest micro-batch per GPU.")
    max_local_batch: PositiveCount = Field(description="Largest micro-batch that fits a GPU.")
    scale: Positive = Field(
        default=1.0, description="Multiplies the modelled throughput (calibration, projection)."
    )
    max_nodes: PositiveCount | None = Field(
        default=None, description="Most nodes a configuration may span on this type."
    )


class GoodputModel(Strict):
    """What the job's agent knows: its throughput model per GPU type and gradient statistics."""

    init_batch: PositiveCount = Field(description="Initial (smallest) global batch M0.")
    max_batch: PositiveCount = Field(description="Largest global batch the job may train at.")
    grad_sqr: Positive = Field(description="|g|², the squared norm of the true gradient.")
    grad_var: NonNegative = Field(description="tr Σ, the gradient noise at the initial batch.")
    types: dict[Name, TypeModel] = Field(
        description="Per GPU type the job can run on, its throughput model."
    )


class CurrentConfiguration(Strict):
    """Where the job runs now."""

    gpu_type: Name
    gpus: PositiveCount
    nodes: PositiveCount | None = Field(default=None, description="Any node count when absent.")


class Elastic(Strict):
    """How an elastic job may run, and where it stands."""

    configurations: list[Configuration] | None = Field(
        default=None, description="Candidate configurations with their throughput and goodput."
    )
    model: GoodputModel | None = Field(
        default=None,
        description="A goodput model from which a configuration is computed for every node "
        "shape of the cluster (needs `nodes`); instead of `configurations`.",
    )
    max_gpus: PositiveCount | None = Field(
        default=None, description="Offer no configuration with more GPUs than this."
    )
    current: CurrentConfiguration | None = Field(
        default=None, description="The configuration the job runs in now; none: it waits."
    )
    pinned: Flag = Field(
        default=False,
        description="The job is restarting (checkpoint-restore) and keeps `current` this round.",
    )
    age: NonNegative | None = Field(
        default=None, description="Seconds since the job arrived (Sia's re-allocation factor)."
    )
    restarts: Count = Field(default=0, description="Times the job has been restarted so far.")
    restart_seconds: NonNegative = Field(
        default=0.0,
        description="Seconds a restart costs the job; with `age` and `restarts` they discount "
        "every configuration but the current one (Sia's re-allocation factor).",
    )
    remaining: NonNegative | None = Field(
        default=None,
        description="Work left, in goodput units × seconds (remaining time = remaining / "
        "goodput; the ones objective).",
    )
