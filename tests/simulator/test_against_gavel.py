"""The simulator's defaults on Gavel's own ground: on its 96-job physical trace (8 V100 / 16 P100
/ 24 K80), apportion's max-min fairness, water filling and finish-time fairness finish jobs no
later on average than Gavel's simulator reports for its own versions of them (figures recorded
from a run of Gavel's simulator: `refdata/source/gavel_simulator_jct.json`)."""

from __future__ import annotations

import pytest

from apportion.refdata.gavel_runs import reference_jct, reference_runs
from apportion.simulator.config import SimConfig
from apportion.simulator.engine import simulate
from apportion.simulator.sources import TraceSpec


def test_the_reference_figures_name_the_run_they_come_from() -> None:
    runs = reference_runs()
    assert runs["cluster"] == {"v100": 8, "p100": 16, "k80": 24} and runs["seed"] == 0
    assert "c4fa40097339e9608ab71fd64c8bdea96a5e4a4c" in runs["source"]
    assert set(reference_jct()) == {
        "max_min_fairness",
        "water_filling",
        "finish_time_fairness",
        "max_min_agnostic",
    }


@pytest.mark.parametrize("policy", ["max_min_fairness", "water_filling", "finish_time_fairness"])
def test_default_settings_land_at_or_below_gavels_average_jct(policy: str) -> None:
    trace = TraceSpec("gavel").load_trace()
    result = simulate(trace, SimConfig(policy=policy))
    assert result.summary["finished"] == 96
    assert result.summary["jct_mean"] <= reference_jct()[policy]
