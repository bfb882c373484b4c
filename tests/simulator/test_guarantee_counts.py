"""The deadline summary's account of deadline admission's promises: `guarantees_broken` (a later
answer withdrew a guarantee) and `guaranteed_missed` (a guarantee kept to the end whose job
still missed its deadline in the replay), read from the job table the enactors fill in."""

from __future__ import annotations

import numpy as np

from apportion.simulator.enact.common import CallLog
from apportion.simulator.engine import Series
from apportion.simulator.metrics import calls_frame, records, summarize, timeseries
from apportion.simulator.state import DONE, JobTable
from apportion.simulator.trace import Deadline
from tests.simulator.helpers import job, trace

HOUR = 3600.0


def test_broken_and_missed_guarantees_are_counted_apart() -> None:
    table = JobTable.from_trace(
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
