"""Builders and checks shared by the mechanism tests, computed from the inputs alone."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from apportion.mechanism import PairShare, Round, Rule, next_round
from apportion.solver.snapshot import Snapshot, parse_snapshot

ROUND = 360.0  # seconds, Gavel's round length


def cluster(
    nodes: Mapping[str, tuple[str, int]],
    jobs: Sequence[tuple[str, int]] = (),
    types: Sequence[str] | None = None,
) -> Snapshot:
    """A snapshot from {node id: (gpu type, GPUs)} and [(job id, scale factor)]; every job can
    run on every type (the allocation decides where it runs)."""
    names = types or sorted({t for t, _ in nodes.values()})
    counts = {t: sum(g for kind, g in nodes.values() if kind == t) for t in names}
    return parse_snapshot(
        {
            "gpu_types": [{"name": t, "count": c} for t, c in counts.items()],
            "nodes": [{"id": n, "gpu_type": t, "gpus": g} for n, (t, g) in nodes.items()],
            "jobs": [
                {"id": j, "scale_factor": s, "throughput": {t: 1.0 for t in names}} for j, s in jobs
            ],
        }
    )


def assert_valid_round(
    rnd: Round,
    snapshot: Snapshot,
    allocation: Mapping[str, Mapping[str, float]],
    pairs: Sequence[PairShare] = (),
) -> None:
    """Every job at most once; placements of the right type and gang size; no GPU
    double-booked (a pair's members share theirs); idle GPUs add up; only time allocated."""
    size = {n.id: (n.gpu_type, n.gpus) for n in snapshot.nodes or []}
    scale = {job.id: job.scale_factor for job in snapshot.jobs}
    shared = {frozenset((p.a, p.b)): p for p in pairs}
    jobs = Counter(a.job for a in rnd.assignments)
    assert all(n == 1 for n in jobs.values()), f"a job runs twice: {jobs}"
    used: Counter[str] = Counter()
    for a in rnd.assignments:
        assert sum(a.placement.values()) == scale[a.job], f"{a.job}: gang not whole"
        assert all(size[node][0] == a.gpu_type for node in a.placement), f"{a.job}: wrong type"
        if a.shared_with is None:
            assert allocation.get(a.job, {}).get(a.gpu_type, 0) > 0, f"{a.job}: no time there"
            used.update(a.placement)
        else:
            pair = shared[frozenset((a.job, a.shared_with))]
            assert pair.allocation.get(a.gpu_type, 0) > 0
            partner = next(b for b in rnd.assignments if b.job == a.shared_with)
            assert partner.placement == a.placement and partner.gpu_type == a.gpu_type
            if a.job == pair.a:  # count a pair's GPUs once
                used.update(a.placement)
    for node, gpus in used.items():
        assert gpus <= size[node][1], f"node {node} double-booked: {gpus} > {size[node][1]}"
    free: Counter[str] = Counter()
    for node, (kind, gpus) in size.items():
        free[kind] += gpus - used[node]
    assert rnd.idle == {g.name: free[g.name] for g in snapshot.gpu_types}
    assert not set(rnd.waiting) & set(jobs), "a job both runs and waits"
    assert set(rnd.reasons) == set(rnd.waiting)


@dataclass
class Replay:
    """Rounds run one after another, with the bookkeeping a simulator does between them."""

    snapshot: Snapshot
    allocation: Mapping[str, Mapping[str, float]]
    pairs: list[PairShare] = field(default_factory=list)
    received: dict[str, dict[str, float]] = field(default_factory=dict)
    previous: dict[str, dict[str, int]] = field(default_factory=dict)
    rounds: int = 0
    rule: Rule = Rule.GAVEL

    def step(self) -> Round:
        rnd = next_round(
            self.snapshot,
            self.allocation,
            self.received,
            self.previous,
            tuple(self.pairs),
            rule=self.rule,
            round_seconds=ROUND,
        )
        assert_valid_round(rnd, self.snapshot, self.allocation, self.pairs)
        self.rounds += 1
        self.previous = {}
        together: set[frozenset[str]] = set()
        for a in rnd.assignments:
            mine = self.received.setdefault(a.job, {})
            mine[a.gpu_type] = mine.get(a.gpu_type, 0.0) + ROUND
            self.previous[a.job] = dict(a.placement)
            if a.shared_with is not None:
                together.add(frozenset((a.job, a.shared_with)))
        self.pairs = [_add_together(p, rnd, together) for p in self.pairs]
        return rnd

    def run(self, rounds: int) -> list[Round]:
        return [self.step() for _ in range(rounds)]

    def lag(self, job: str, gpu_type: str) -> float:
        """Rounds the job is behind its share on the type (negative: ahead)."""
        share = self.allocation.get(job, {}).get(gpu_type, 0.0)
        return self.rounds * share - self.received.get(job, {}).get(gpu_type, 0.0) / ROUND


def _add_together(pair: PairShare, rnd: Round, together: set[frozenset[str]]) -> PairShare:
    if frozenset((pair.a, pair.b)) not in together:
        return pair
    kind = next(a.gpu_type for a in rnd.assignments if a.job == pair.a)
    received = dict(pair.received)
    received[kind] = received.get(kind, 0.0) + ROUND
    return replace(pair, received=received)


def allocation_of_result(result: Any) -> dict[str, dict[str, float]]:
    return {job.id: dict(job.allocation) for job in result.jobs if job.allocation}
