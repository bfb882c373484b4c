"""Space-sharing snapshots from Gavel's table: pair orientation, coverage, entities."""

from __future__ import annotations

from apportion.refdata.space_sharing import gavel_pairs, gavel_sharing_snapshot, with_entities
from apportion.refdata.synthetic import gavel_snapshot, load_gavel_table
from apportion.solver import parse_snapshot


def test_pairs_keep_each_members_throughput() -> None:
    table = load_gavel_table()
    (first, second), measured = next(
        (key, value) for key, value in table.pairs.items() if key[0] != key[1]
    )
    jobs = [
        {"id": "x", "workload_class": second[0], "scale_factor": second[1]},
        {"id": "y", "workload_class": first[0], "scale_factor": first[1]},
    ]
    ((pair,),) = [gavel_pairs(jobs, table)]
    assert (pair["a"], pair["b"]) == ("x", "y")
    for gpu, (t_first, t_second) in measured.items():
        if t_first > 0 or t_second > 0:
            # x is the table's second job type: its throughput is the entry's second value.
            assert pair["throughput"][gpu] == [t_second, t_first]


def test_sharing_snapshot_offers_every_measured_pair() -> None:
    snapshot = gavel_sharing_snapshot(20, seed=1)
    parsed = parse_snapshot(snapshot)
    assert {job.scale_factor for job in parsed.jobs} == {1}
    table = load_gavel_table()
    kinds = [(job["workload_class"], 1) for job in snapshot["jobs"]]

    def runs_together(a: tuple, b: tuple) -> bool:
        entry = table.pairs.get((a, b)) or table.pairs.get((b, a)) or {}
        return any(ta > 0 or tb > 0 for ta, tb in entry.values())

    measured = sum(runs_together(kinds[i], kinds[j]) for i in range(20) for j in range(i + 1, 20))
    assert len(snapshot["job_pairs"]) == measured > 0


def test_with_entities_assigns_every_job() -> None:
    snapshot = with_entities(gavel_snapshot(50, seed=0), policies=("fairness", "fifo"))
    parsed = parse_snapshot(snapshot)
    assert [e.policy for e in parsed.entities or []] == ["fairness", "fifo"] * 2 + ["fairness"]
    assert all(job.entity for job in parsed.jobs)
