"""The `chronus_one_by_one` baseline in a lease simulation: the simulation tells it when each job
arrived, and a job declined at its arrival is not admitted later (Chronus checks each job once),
where deadline admission admits it."""

from __future__ import annotations

from apportion.simulator.config import Mode, SimConfig
from apportion.simulator.engine import simulate
from apportion.simulator.trace import Deadline
from tests.simulator.helpers import job, trace

LEASE = 600.0
SPEED = {"gpu": 1.0}


def _guaranteed(policy: str) -> dict[str, bool]:
    # Both arrive at 0 on one 8-GPU node. s is soft: due at 600 s (worth 10) or 3,000 s (5);
    # no whole lease lies between the next boundary and 600 s, so Chronus declines s, and t
    # after it in the same check. s then runs at once, t when s ends at 500 s: a call at
    # which t, offered again, would be admitted.
    s = job("s", 500.0, gpus=8, speed=SPEED, deadlines=[Deadline(600.0, 10), Deadline(3e3, 5)])
    t = job("t", 500.0, gpus=8, speed=SPEED, deadlines=[Deadline(6000.0, 10.0)])
    config = SimConfig(policy=policy, mode=Mode.LEASES, lease_seconds=LEASE)
    records = simulate(trace([s, t], {"gpu": 8}, per_node=8), config).records.set_index("job")
    assert records["deadline_met"].astype(bool).all()
    return {name: bool(records.loc[name, "guaranteed"]) for name in ("s", "t")}


def test_jobs_declined_at_arrival_stay_declined_under_chronus_one_by_one() -> None:
    assert _guaranteed("chronus_one_by_one") == {"s": False, "t": False}


def test_deadline_admission_guarantees_both() -> None:
    assert _guaranteed("deadline_admission") == {"s": True, "t": True}
