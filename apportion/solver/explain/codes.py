"""The reason vocabulary: stable codes, documented in docs/EXPLANATIONS.md. New codes may be
added; existing ones keep their meaning."""

from __future__ import annotations

from enum import StrEnum


class Reason(StrEnum):
    # From the data alone, whatever the policy.
    NO_THROUGHPUT = "no_throughput"  # no positive throughput on any GPU type
    GANG_DOES_NOT_FIT = "gang_does_not_fit"  # its gang is wider than every type (or node) it fits
    # From an LP's duals (allocation policies).
    BOTTLENECK = "bottleneck"  # its share row holds the objective (non-zero dual at the level)
    FULL_TIME = "full_time"  # runs all of its time: only faster types would give it more
    FLOOR = "floor"  # held at its level by a later stage: more for it would cost others more
    CAPACITY = "capacity"  # more would need GPU types that are fully used
    NOT_HELD = "not_held"  # nothing binds: other optima give it more or less at no cost
    # From a MILP's data and solution (decision policies).
    GRANTED = "granted"  # admitted / placed / its SLO met as asked
    DEADLINE_UNREACHABLE = "deadline_unreachable"  # not even alone on the fastest type
    CONTENTION_PENALTY = "contention_penalty"  # placed where co-located jobs slow it down
    LOWER_VALUE = "lower_value"  # lost to jobs of higher value for the same GPUs
    NO_DEADLINE = "no_deadline"  # asks for no deadline: a policy serving only SLOs gives it none
    # When the evidence is missing: never a guess.
    UNAVAILABLE = "unavailable"  # the solver reported no duals
    NOT_EXPLAINED = "not_explained"  # the policy hands no evidence for this job
