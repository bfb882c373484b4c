"""The adapter's state: time received per job and GPU type, counted between observations,
saved atomically with a last good copy, rebuilt from the running jobs on a first start, and
refused (with how to recover) when the file is broken or lost."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from apportion.adapters.framework import ledger
from apportion.adapters.framework.integration import Seen
from apportion.adapters.framework.ledger import Ledger

RECORDED_AT = 1795425590.0
NOW = RECORDED_AT + 10  # 10 s after the jobs were read


def _jobs() -> list[Seen]:
    """Jobs 1 and 3 running on V100 since RECORDED_AT - 8, job 2 on K80 since RECORDED_AT - 2
    (after a requeue); 4, 5, 6 waiting; 7 running without a GPU."""
    return [
        Seen("1", "v100", RECORDED_AT - 8),
        Seen("2", "k80", RECORDED_AT - 2),
        Seen("3", "v100", RECORDED_AT - 8),
        *(Seen(j) for j in ("4", "5", "6")),
        Seen("7", None, RECORDED_AT - 8),
    ]


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
    restarted = [replace(j, started=NOW + 3) if j.id == "2" else j for j in jobs]
    assert start.observe(restarted, NOW + 4).received["2"] == {"k80": 1.0}


def test_the_state_file_survives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    saved = Ledger(NOW, {"1": {"v100": 18.0}}, {"4": "JobHeldUser"}, frozenset({"1", "4"}))
    ledger.save(path, saved)
    # No temporary left over; the last good copy is the same file.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json", "state.json.last-good"]
    assert ledger.last_good(path).read_text() == path.read_text()
    loaded = ledger.load(path, _jobs(), NOW + 30)
    assert loaded.problem is None and not loaded.fatal
    assert loaded.ledger == saved
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
    # Only a first start (no file ever) may go on with it; history would be lost otherwise.
    assert loaded.fatal == (text is not None)


def test_a_truncated_or_lost_file_is_refused_with_the_way_back(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    ledger.check(path)  # a first start: nothing to refuse
    good = Ledger(NOW, {"1": {"v100": 18.0}})
    ledger.save(path, good)
    text = path.read_text()
    path.write_text(text[: len(text) // 2])  # cut as a full disk or a crash would
    with pytest.raises(ledger.StateError) as refused:
        ledger.check(path)
    line = str(refused.value)
    assert "\n" not in line and "state: Invalid JSON" in line
    assert f"`cp {ledger.last_good(path)} {path}`" in line and "--rebuild-state" in line
    assert ledger.load(path, _jobs(), NOW).fatal
    # The way back it names works: the copy is the last good ledger.
    path.write_text(ledger.last_good(path).read_text())
    ledger.check(path)
    assert ledger.load(path, _jobs(), NOW).ledger == good
    path.unlink()  # lost while its copy remains: refused too
    with pytest.raises(ledger.StateError, match="the state file is gone"):
        ledger.check(path)
    assert ledger.load(path, _jobs(), NOW).fatal
