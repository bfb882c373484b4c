"""The deadline summary's account of deadline admission's promises: `guarantees_broken` (a later
answer withdrew a guarantee) and `guaranteed_missed` (a guarantee kept to the end whose job
still missed its deadline in the replay), read from the job table the enactors fill in."""

from __future__ import annotations

import numpy as np

from apportion.simulator.enact.common import CallLog
from apportion.simulator.metrics import calls_frame, records, summarize, timeseries
from apportion.simulator.series import Series
from apportion.simulator.state import DONE, JobStates
from apportion.simulator.trace import Deadline
from tests.simulator.helpers import job, trace

HOUR = 3600.0


def test_broken_and_missed_guarantees_are_counted_apart() -> None:
    table = JobStates.from_trace(
        trace(
            [
                job("kept", HOUR, deadlines=[Deadline(2 * HOUR)]),
                job("late", HOUR, deadlines=[Deadline(2 * HOUR)]),
                job("withdrawn", HOUR, deadlines=[Deadline(2 * HOUR)]),
                job("best-effort", HOUR),
            ]
        )
    )
    # What a replay left behind: "kept" and "late" held their guarantees to the end, "late"
    # finished after its deadline; "withdrawn" lost its guarantee and never finished.
    finished = np.array([0, 1, 3])
    table.state[finished] = DONE
    table.finish[finished] = [1.5 * HOUR, 2.5 * HOUR, 1.0 * HOUR]
    table.guaranteed[:] = [True, True, False, False]
    table.broken[:] = [False, False, True, False]

    jobs = records(table)
    assert jobs.set_index("job")["guarantee_broken"].to_dict() == {
        "kept": False,
        "late": False,
        "withdrawn": True,
        "best-effort": False,
    }
    summary = summarize(table, jobs, timeseries(Series(), table), calls_frame(CallLog()))
    assert summary["slo_jobs"] == 3
    assert summary["guarantees_broken"] == 1
    assert summary["guaranteed_missed"] == 1
    assert summary["deadline_met_fraction"] == 1 / 3


def test_satisfaction_is_chronus_schedule_summary_and_first_deadlines_are_counted() -> None:
    # Chronus's schedule_summary: 1 − miss_ddl = value of the first option met ÷ 10 (every job's
    # best value). soft ends between its options (earns 5 of 10), strict on time (10 of 10),
    # missed never in time (0): satisfaction (0.5 + 1 + 0) / 3; first deadlines met: 1 of 3.
    soft = job("soft", HOUR, deadlines=[Deadline(HOUR, 10.0), Deadline(2 * HOUR, 5.0)])
    strict = job("strict", HOUR, deadlines=[Deadline(2 * HOUR, 10.0)])
    missed = job("missed", HOUR, deadlines=[Deadline(HOUR, 10.0)])
    table = JobStates.from_trace(trace([soft, strict, missed, job("best-effort", HOUR)]))
    table.state[:] = DONE
    table.finish[:] = [1.5 * HOUR, 2.0 * HOUR, 3.0 * HOUR, 4.0 * HOUR]
    jobs = records(table)
    summary = summarize(table, jobs, timeseries(Series(), table), calls_frame(CallLog()))
    assert summary["satisfaction"] == (0.5 + 1.0 + 0.0) / 3
    assert summary["first_deadline_met_fraction"] == 1 / 3
    assert summary["deadline_met_fraction"] == 2 / 3
