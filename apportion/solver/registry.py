"""Policies by name. Each entry says where its module is, so a request imports only the policy
it names (a max-min solve never loads the MILP families or scipy.optimize)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache

from apportion.solver.policy import AnyPolicy


@dataclass(frozen=True)
class Entry:
    name: str
    module: str
    attribute: str = "POLICY"
    aliases: tuple[str, ...] = ()

    def load(self) -> AnyPolicy:
        policy: AnyPolicy = getattr(importlib.import_module(self.module), self.attribute)
        return policy


ENTRIES: tuple[Entry, ...] = (
    Entry(
        "max_min_fairness", "apportion.formulations.fairness.max_min", aliases=("max_min", "las")
    ),
    Entry(
        "water_filling",
        "apportion.formulations.fairness.water_filling",
        aliases=("max_min_fairness_water_filling", "leximin"),
    ),
    Entry(
        "hierarchical",
        "apportion.formulations.fairness.hierarchical",
        aliases=("hierarchical_fairness", "hierarchical_max_min_fairness"),
    ),
    Entry(
        "makespan",
        "apportion.formulations.objectives.makespan",
        aliases=("min_makespan", "minimize_makespan"),
    ),
    Entry(
        "finish_time_fairness",
        "apportion.formulations.objectives.finish_time_fairness",
        aliases=("ftf", "themis"),
    ),
    Entry(
        "max_total_throughput",
        "apportion.formulations.objectives.max_throughput",
        aliases=("max_throughput", "throughput"),
    ),
    Entry(
        "throughput_per_dollar",
        "apportion.formulations.objectives.per_dollar",
        aliases=("max_throughput_per_dollar", "cost_efficiency"),
    ),
    Entry(
        "min_cost_slo",
        "apportion.formulations.objectives.min_cost_slo",
        aliases=("min_cost", "cost_slo", "min_cost_subject_to_slos"),
    ),
    Entry(
        "fifo",
        "apportion.formulations.objectives.fifo",
        aliases=("fifo_heterogeneity_aware", "first_in_first_out"),
    ),
    Entry(
        "deadline_admission",
        "apportion.formulations.deadlines.admission",
        aliases=("chronus", "deadlines"),
    ),
    Entry(
        "contention_placement",
        "apportion.formulations.placement.policy",
        aliases=("deepshare", "contention"),
    ),
    Entry(
        "sia", "apportion.formulations.elastic.sia", aliases=("elastic_sia", "elastic_power_mean")
    ),
    Entry("ones", "apportion.formulations.elastic.ones", aliases=("elastic_ones",)),
    Entry(
        "elastic_max_min", "apportion.formulations.elastic.max_min", aliases=("elastic_fairness",)
    ),
    Entry(
        "elastic_max_goodput",
        "apportion.formulations.elastic.max_goodput",
        aliases=("max_goodput", "max_total_goodput"),
    ),
)

DEFAULT_POLICY = "max_min_fairness"
NAMES: tuple[str, ...] = tuple(e.name for e in ENTRIES)
_BY_KEY = {key: e for e in ENTRIES for key in (e.name, *e.aliases)}


def find_policy(name: str) -> AnyPolicy | None:
    """The policy called `name` (or one of its aliases), None if there is none."""
    entry = _BY_KEY.get(name.strip().lower().replace("-", "_"))
    return None if entry is None else entry.load()


@cache
def all_policies() -> dict[str, AnyPolicy]:
    """Every policy, loaded (for listings: this imports every family)."""
    return {e.name: e.load() for e in ENTRIES}


def aliases(name: str) -> tuple[str, ...]:
    return _BY_KEY[name].aliases
