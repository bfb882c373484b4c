"""simulator.remaining_study: deadline admission's runs told a remaining-time belief (every arm
on every trace and size, the oracle once), and the claims per (trace, cluster) from a table
whose ratios are worked out by hand."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from apportion.simulator import deadline_study as study
from apportion.simulator import remaining_study as noisy
from apportion.simulator.config import REMAINING_TIME_LEVEL, Mode


def test_every_arm_runs_on_every_trace_and_size_the_oracle_once() -> None:
    traces = {"MIX2": noisy.TRACES["MIX2"], "SLO": noisy.TRACES["SLO"]}
    runs = noisy.runs(traces, (16, 48), jobs=20, seeds=(0, 1))
    per_pair = 1 + 4 * 2  # the oracle once, four noisy arms × two seeds
    assert len(runs) == 2 * 2 * per_pair
    assert [(r.trace, r.gpus) for r in runs[::per_pair]] == [
        ("MIX2", 16),
        ("MIX2", 48),
        ("SLO", 16),
        ("SLO", 48),
    ]
    for run in runs:
        config = run.spec.config
        # The deadline study's mechanics and its policy asked on every event.
        assert config.mode is Mode.LEASES and config.policy == study.OURS
        assert config.call_seconds is None and config.overhead_model == "chronus"
        assert config.remaining_time_noise == run.arm.sigma and config.seed == run.seed
        assert config.remaining_time_level == run.arm.level
        assert config.remaining_time_estimator == run.arm.estimator
    labels = {r.arm.label: r.arm for r in runs}
    assert labels["oracle"].sigma == 0.0
    assert labels["margin"].level == REMAINING_TIME_LEVEL and labels["no margin"].level is None
    assert labels["online margin"].estimator == "online"


def entry(arm: str, seed: int, satisfaction: float, broken: int = 0) -> dict[str, Any]:
    return {
        "trace": "T",
        "gpus": 16,
        "arm": arm,
        "seed": seed,
        "satisfaction": satisfaction,
        "guarantees_broken": broken,
        "guaranteed_missed": 0,
    }


def test_the_claims_per_arm() -> None:
    frame = pd.DataFrame(
        [
            entry("oracle", 0, 0.90),
            entry("margin", 0, 0.88),
            entry("margin", 1, 0.86),  # mean 0.87: 0.9667 × the oracle, below 0.97
            entry("no margin", 0, 0.89, broken=3),
            entry("no margin", 1, 0.89, broken=2),
            entry("online margin", 0, 0.88),
            entry("online margin", 1, 0.88),  # 0.9778 ×: met
        ]
    )
    checks = noisy.targets(frame).set_index("arm")
    assert checks.loc["margin", "vs_oracle"] == pytest.approx(0.87 / 0.90)
    assert not checks.loc["margin", "met"]
    assert checks.loc["online margin", "met"]
    assert checks.loc["no margin", "broken"] == 5 and checks.loc["no margin", "seeds"] == 2
    assert checks.loc["no margin", "met"] is None  # the cost of the error, not a claim
