"""Gavel's throughputs file read as Gavel writes it: the bundled table round-trips through
Gavel's format (isolated rates and co-located pairs), and every malformed entry is named."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from apportion.refdata.synthetic import load_gavel_table
from apportion.simulator.traces.errors import TraceError
from apportion.simulator.traces.gavel_table import read_throughputs
from tests.simulator.helpers import gavel_throughputs_file


def test_the_bundled_table_round_trips_through_gavels_format(tmp_path: Path) -> None:
    bundled = load_gavel_table()
    read = read_throughputs(gavel_throughputs_file(tmp_path / "simulation_throughputs.json"))
    assert set(read.gpu_types) == set(bundled.gpu_types)
    assert set(read.job_types) == set(bundled.job_types)
    for job_type in bundled.job_types:
        assert read.throughput(job_type) == pytest.approx(bundled.throughput(job_type))
    assert set(read.pairs) == set(bundled.pairs)
    for key, per_type in bundled.pairs.items():
        for gpu, rates in per_type.items():
            assert read.pairs[key][gpu] == pytest.approx(rates)
    assert np.isfinite(read.isolated).all()


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ([1, 2], "expected a JSON object keyed by worker type"),
        ({"v100": 3}, "'v100': expected a map of job types"),
        ({"v100": {"ResNet": {"null": 1.0}}}, "expected a job type like"),
        ({"v100": {"('ResNet', 0)": {"null": 1.0}}}, "expected a job type like"),
        ({"v100": {"('ResNet', 1)": {"alone": 1.0}}}, 'with a "null" entry'),
        ({"v100": {"('ResNet', 1)": {"null": -2.0}}}, "cannot be negative"),
        ({"v100": {"('ResNet', 1)": {"null": True}}}, "expected a number of steps/s"),
        (
            {"v100": {"('ResNet', 1)": {"null": 1.0, "('LM', 1)": [1.0]}}},
            "expected [this job's, the other's] steps/s",
        ),
        ({}, "expected a JSON object keyed by worker type"),
    ],
)
def test_a_malformed_entry_is_named(tmp_path: Path, document: object, message: str) -> None:
    path = tmp_path / "throughputs.json"
    path.write_text(json.dumps(document))
    with pytest.raises(TraceError) as raised:
        read_throughputs(path)
    assert message in raised.value.one_line() and str(path) in raised.value.one_line()


def test_a_file_that_is_not_json_is_named(tmp_path: Path) -> None:
    path = tmp_path / "throughputs.json"
    path.write_text("{not json")
    with pytest.raises(TraceError, match="not JSON"):
        read_throughputs(path)
