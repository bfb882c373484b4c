"""The adapter's state: time received per job and GPU type, counted between observations,
saved atomically, and rebuilt from the running jobs after a restart with a missing or broken
file."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from apportion.adapters.slurm import ledger
from apportion.adapters.slurm.ledger import Ledger
from apportion.adapters.slurm.slurmcli import SlurmJob, parse_jobs
from tests.adapters.slurm.samples import RECORDED_AT, squeue

NOW = RECORDED_AT + 10  # 10 s after the recording


def _jobs() -> list[SlurmJob]:
    return parse_jobs(squeue())


def test_a_rebuilt_ledger_counts_each_running_job_since_slurm_started_it() -> None:
    rebuilt = Ledger.rebuilt(_jobs(), NOW)
    # 1 and 3 started at RECORDED_AT - 8, job 2 (requeued) at RECORDED_AT - 2; pending jobs
    # have nothing yet; the CPU-only job 7 has no GPU type and is not counted.
    assert rebuilt.received == {"1": {"v100": 18.0}, "2": {"k80": 12.0}, "3": {"v100": 18.0}}


def test_observations_add_the_time_since_the_last_one_and_drop_finished_jobs() -> None:
    jobs = _jobs()
    start = Ledger(
        updated=NOW, received={"1": {"k80": 5.0}, "4": {"v100": 3.0}, "gone": {"k80": 1}}
    )
    later = start.observe(jobs, NOW + 4)
    assert later.received["1"] == {"k80": 5.0, "v100": 4.0}  # 4 more seconds on V100
    assert later.received["4"] == {"v100": 3.0}  # pending: keeps what it had
    assert "gone" not in later.received  # Slurm no longer lists it
    # A job (re)started after the last observation counts from its start only.
    restarted = [replace(j, start_time=NOW + 3) if j.id == "2" else j for j in jobs]
    assert start.observe(restarted, NOW + 4).received["2"] == {"k80": 1.0}


def test_the_state_file_survives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    ledger.save(path, Ledger(updated=NOW, received={"1": {"v100": 18.0}}))
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]  # no temporary left over
    loaded = ledger.load(path, _jobs(), NOW + 30)
    assert loaded.problem is None
    assert loaded.ledger == Ledger(updated=NOW, received={"1": {"v100": 18.0}})
    # The 30 s the adapter was down are counted for the job that ran through them.
    assert loaded.ledger.observe(_jobs(), NOW + 30).received["1"] == {"v100": 48.0}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (None, "no state file yet"),
        ("{not json", "state: Invalid JSON"),
        ('{"version": 2, "updated": 1, "received": {}}', "state.version: Input should be 1"),
        (
            '{"version": 1, "updated": 1, "received": {"1": {"v100": -3}}}',
            "state.received.1.v100: Input should be greater than or equal to 0",
        ),
        (
            json.dumps({"version": 1, "updated": NOW + 3600, "received": {}}),
            "state.updated: ",
        ),
    ],
)
def test_a_missing_or_broken_file_is_rebuilt_and_says_why(
    tmp_path: Path, text: str | None, problem: str
) -> None:
    path = tmp_path / "state.json"
    if text is not None:
        path.write_text(text)
    loaded = ledger.load(path, _jobs(), NOW)
    assert loaded.problem is not None and problem in loaded.problem
    assert loaded.ledger == Ledger.rebuilt(_jobs(), NOW)
