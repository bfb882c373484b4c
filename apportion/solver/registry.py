"""Policies by name. Each entry says where its module is, so a request imports only the policy
it names (a max-min solve never loads the MILP families or scipy.optimize).

Besides our names and plain aliases, an entry knows Gavel's names for it (`utils.get_policy` in
Gavel's scheduler) with the options each implies: `max_min_fairness_packed` is `max_min_fairness`
with `space_sharing=true`. Where Gavel's name is also ours (`max_min_fairness`,
`finish_time_fairness`, `fifo`: heterogeneity-agnostic in Gavel), ours wins; Gavel's agnostic
policy is ours with `heterogeneity_aware=false`. Gavel's names without a counterpart here are
refused with the reason (`GAVEL_MISSING`).
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from apportion.solver.errors import did_you_mean
from apportion.solver.policy import AnyPolicy

Implied = tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class Entry:
    name: str
    module: str
    attribute: str = "POLICY"
    aliases: tuple[str, ...] = ()
    #: Gavel's names for this policy, each with the options it implies.
    gavel: tuple[tuple[str, Implied], ...] = ()

    def load(self) -> AnyPolicy:
        # Once imported, read from the modules loaded (every request names its policy twice).
        module = sys.modules.get(self.module) or importlib.import_module(self.module)
        policy: AnyPolicy = getattr(module, self.attribute)
        return policy

    @property
    def names(self) -> tuple[str, ...]:
        """Every name a request may use for this policy: ours, aliases, Gavel's."""
        return (self.name, *self.aliases, *(name for name, _ in self.gavel))


@dataclass(frozen=True)
class Resolved:
    """A policy name as given, read as one of ours with the options that name implies."""

    given: str
    policy: str
    options: Mapping[str, Any]
    system: str = ""  # whose vocabulary the name is from ("" for ours and our aliases)

    @property
    def note(self) -> str:
        """What the name was read as, for the output; "" for our own names and aliases."""
        if not self.system:
            return ""
        implied = ", ".join(f"{k}={json.dumps(v)}" for k, v in self.options.items())
        return f"{self.given!r} is {self.system}'s name: solved as {self.policy}" + (
            f" with {implied}" if implied else ""
        )


ENTRIES: tuple[Entry, ...] = (
    Entry(
        "max_min_fairness",
        "apportion.formulations.fairness.max_min",
        aliases=("max_min", "las"),
        gavel=(
            ("max_min_fairness_perf", ()),
            ("max_min_fairness_packed", (("space_sharing", True),)),
        ),
    ),
    Entry(
        "water_filling",
        "apportion.formulations.fairness.water_filling",
        aliases=("max_min_fairness_water_filling", "leximin"),
        gavel=(
            ("max_min_fairness_water_filling_perf", ()),
            ("max_min_fairness_water_filling_packed", (("space_sharing", True),)),
        ),
    ),
    Entry(
        "robust_max_min",
        "apportion.formulations.fairness.robust",
        aliases=("robust_max_min_fairness", "max_min_robust"),
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
        gavel=(("min_total_duration", ()), ("min_total_duration_perf", ())),
    ),
    Entry(
        "finish_time_fairness",
        "apportion.formulations.objectives.finish_time_fairness",
        aliases=("ftf", "themis"),
        gavel=(("finish_time_fairness_perf", ()),),
    ),
    Entry(
        "max_total_throughput",
        "apportion.formulations.objectives.max_throughput",
        aliases=("max_throughput", "throughput"),
        gavel=(("max_sum_throughput_perf", ()),),
    ),
    Entry(
        "throughput_per_dollar",
        "apportion.formulations.objectives.per_dollar",
        aliases=("max_throughput_per_dollar", "cost_efficiency"),
        gavel=(("max_sum_throughput_normalized_by_cost_perf", ()),),
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
        gavel=(("fifo_perf", (("mode", "gavel"),)),),
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
        "tiresias_las",
        "apportion.formulations.tiresias.two_d_las",
        aliases=("tiresias_l", "discretized_2d_las", "2d_las_exact"),
    ),
    Entry(
        "tiresias_gittins",
        "apportion.formulations.tiresias.two_d_gittins",
        aliases=("tiresias_g", "discretized_2d_gittins", "2d_gittins"),
    ),
    Entry(
        "network_load_placement",
        "apportion.formulations.tiresias.network_load",
        aliases=("min_max_network_load", "tiresias_placement"),
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

#: Gavel's policy names with no counterpart here, and why.
GAVEL_MISSING: dict[str, str] = {
    "fifo_packed": "FIFO here has no space sharing; fifo_perf is Gavel's aware FIFO",
    "finish_time_fairness_packed": "finish_time_fairness here has no space sharing",
    "min_total_duration_packed": "makespan here has no space sharing",
    "max_sum_throughput_normalized_by_cost_perf_slos": "its objective (throughput per dollar "
    "under SLOs) is not one of ours; min_cost_slo minimizes the price under SLOs",
    "max_sum_throughput_normalized_by_cost_packed_slos": "its objective (throughput per dollar "
    "under SLOs, with space sharing) is not one of ours",
    "gandiva": "Gandiva's introspective packing is a mechanism, not an allocation policy",
    "isolated": "Gavel's isolated baseline gives each job an equal 1/n share of every type: "
    "max_min_fairness with heterogeneity_aware=false is the nearest policy",
    "allox": "AlloX's min-cost matching is not one of our policies",
}

DEFAULT_POLICY = "max_min_fairness"
NAMES: tuple[str, ...] = tuple(e.name for e in ENTRIES)
_BY_KEY = {key: e for e in ENTRIES for key in (e.name, *e.aliases)}
_GAVEL = {name: (e, dict(implied)) for e in ENTRIES for name, implied in e.gavel}


def _key(name: str) -> str:
    return name.strip().lower().replace("-", "_")


def resolve(name: str) -> Resolved | None:
    """`name` read as one of ours (with the options a foreign name implies), None if no policy
    is called that."""
    key = _key(name)
    entry = _BY_KEY.get(key)
    if entry is not None:
        return Resolved(name, entry.name, {})
    if key in _GAVEL:
        entry, implied = _GAVEL[key]
        return Resolved(name, entry.name, implied, system="Gavel")
    return None


#: An unknown name is echoed up to this many characters (a 5 MB name is not sent back whole).
ECHO = 40
#: The longest message naming the choices: the service echoes no more than 200 characters.
MESSAGE = 200


def unknown_policy(name: str) -> str:
    """Why no policy is called `name`: the nearest name if one is near (ours, an alias or
    Gavel's), then the choices, cut after a whole name when they would not fit."""
    missing = GAVEL_MISSING.get(_key(name))
    if missing is not None:
        return f"Gavel's policy {name!r} has no counterpart here: {missing}"
    shown = name if len(name) <= ECHO else name[:ECHO] + "…"
    near = did_you_mean(_key(name), [*_BY_KEY, *_GAVEL])
    return _choices(f"unknown policy {shown!r}{near}; choose one of ")


def _choices(head: str) -> str:
    """`head` and every policy name, or as many whole names as fit and how many more."""
    for count in range(len(NAMES), 1, -1):
        text = head + ", ".join(NAMES[:count]) + _more(len(NAMES) - count)
        if len(text) <= MESSAGE:
            return text
    return head + NAMES[0] + _more(len(NAMES) - 1)


def _more(rest: int) -> str:
    return f" … and {rest} more (all: `solve policies`, GET /v1/policies)" if rest else ""


def find_policy(name: str) -> AnyPolicy | None:
    """The policy called `name` (one of its aliases, or Gavel's name for it), None if there is
    none. Options a Gavel name implies come from `resolve`."""
    resolved = resolve(name)
    return None if resolved is None else _BY_KEY[resolved.policy].load()


@cache
def all_policies() -> dict[str, AnyPolicy]:
    """Every policy, loaded (for listings: this imports every family)."""
    return {e.name: e.load() for e in ENTRIES}


def aliases(name: str) -> tuple[str, ...]:
    return _BY_KEY[name].aliases


def gavel_names(name: str) -> dict[str, dict[str, Any]]:
    """Gavel's names for policy `name`, each with the options it implies."""
    return {gavel: dict(implied) for gavel, implied in _BY_KEY[name].gavel}
