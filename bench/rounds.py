"""The round mechanism at cluster scale: one round of 10,000 jobs on 1,000 eight-GPU nodes, the
leases of the previous round given, ≤ 1 s (best of three, the first round untimed)."""

from __future__ import annotations

from apportion.mechanism.rounds import next_round
from apportion.refdata.synthetic import busy_round
from apportion.solver.snapshot import parse_snapshot
from bench.harness import Case, Row, best_of

TYPES = ("v100", "p100", "k80")
ROUND = 360.0


def _row(case: Case) -> Row:
    raw, allocation, received = busy_round(round_seconds=ROUND)
    snapshot = parse_snapshot(raw)
    jobs = raw["jobs"]
    first = next_round(snapshot, allocation, received)
    previous = {a.job: a.placement for a in first.assignments}
    seconds = best_of(lambda: next_round(snapshot, allocation, received, previous), 3)
    rnd = next_round(snapshot, allocation, received, previous)
    kept = sum(1 for a in rnd.assignments if a.kept)
    return Row(
        case=case,
        jobs=len(jobs),
        types=len(TYPES),
        validate=0.0,
        build=0.0,
        solve=seconds,
        total=seconds,
        objective=None,
        status=f"{len(rnd.assignments)} placed",
        backend="mechanism",
        ratio=None,
        note=f"{kept} leases kept; idle GPUs {sum(rnd.idle.values())}",
    )


def cases() -> list[Case]:
    return [
        Case(
            "rounds",
            "one round, 10,000 jobs on 1,000 × 8 GPUs, previous leases given",
            dict,
            "max_min_fairness",
            target_seconds=1.0,
            runner=_row,
        )
    ]
