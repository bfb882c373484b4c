"""Contention slowdown of running jobs (DeepShare, FORMULATIONS §7), from where they run.

A job a shares the network of every node it holds GPUs on; its co-runners are the other jobs on
those nodes, and it runs at throughput / CS_a with CS_a = max(1, max over co-runners b of
CS(config_a | config_b)) — DeepShare's worst-co-runner model, the placement policy's default.
Configurations are (workload class, GPUs, nodes spanned); the lookup and its fallbacks are the
policy's own (`formulations.placement.contention`), with its default scope: a job on a single
node neither suffers nor causes network contention.

DeepShare's own model (`SimConfig.contention = reference`, its `update_shared_thp`): the
throughput ratio 1/CS is floored at 0.35 (CS ≤ 1/0.35), and it only ever falls while the job
keeps running: a co-runner leaving does not give the speed back. The ratio is reset when the job
is placed again (started, restarted after a preemption, moved; DeepShare's baselines preempt
and re-place every job every round).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Mapping
from typing import Any

from apportion.simulator.state import JobStates
from apportion.solver.snapshot.contention import ContentionTable

Config = tuple[str | None, int, int]
#: DeepShare's floor on the throughput ratio under contention ("safety_min").
REFERENCE_FLOOR = 0.35


class Slowdown:
    """CS per running job, with every (config, config) lookup cached for the whole run;
    `persist`: DeepShare's model (floored ratios that never recover until the job is placed
    again)."""

    def __init__(
        self, table: JobStates, contention: ContentionTable, persist: bool = False
    ) -> None:
        from apportion.formulations.placement.contention import ContentionLookup

        if persist:
            cap = 1.0 / REFERENCE_FLOOR
            contention = contention.model_copy(
                update={"max_cs": min(contention.max_cs or cap, cap)}
            )
        self._lookup: Any = ContentionLookup(contention)
        self._cache: dict[tuple[Config, Config], float] = {}
        self._classes = [job.workload_class for job in table.trace.jobs]
        self.persist = persist
        self._held: dict[int, float] = {}  # persisted CS per running job (persist only)

    def __call__(
        self,
        placements: Mapping[int, Mapping[str, int]],
        placed: Collection[int] = (),
    ) -> dict[int, float]:
        """CS of every job in `placements`; `placed`: the jobs placed (again) just now, whose
        persisted CS starts afresh."""
        now = self._now(placements)
        if not self.persist:
            return now
        for j in placed:
            self._held.pop(j, None)
        self._held = {j: max(cs, self._held.get(j, 1.0)) for j, cs in now.items()}
        return dict(self._held)

    def _now(self, placements: Mapping[int, Mapping[str, int]]) -> dict[int, float]:
        on_node: dict[str, list[int]] = defaultdict(list)
        for j, placement in placements.items():
            for node in placement:
                on_node[node].append(j)
        config = {j: (self._classes[j], sum(p.values()), len(p)) for j, p in placements.items()}
        slowdown: dict[int, float] = {}
        for j, placement in placements.items():
            others = {b for node in placement for b in on_node[node] if b != j}
            worst = 1.0
            for b in others:
                worst = max(worst, self._cs(config[j], config[b]))
            slowdown[j] = worst
        return slowdown

    def _cs(self, target: Config, co_runner: Config) -> float:
        key = (target, co_runner)
        value = self._cache.get(key)
        if value is None:
            value = float(self._lookup(target, co_runner).cs)
            self._cache[key] = value
        return value
