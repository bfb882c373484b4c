"""`solve simulate sia --policy sia`: Sia's workloads as elastic jobs, under an elastic policy.

An elastic policy (`sia`, `ones`, `elastic_max_min`, `elastic_max_goodput`, any of their names)
or `ones_search` (ONES's evolutionary search) runs the elastic simulation (Sia's simulator:
60-s rounds unless `--round-seconds`, each job's GPUs and batch size re-chosen every round). A
rigid policy on the same kind replays the jobs rigid (Sia's "Gavel + TunedJobs"), in the
round-based simulator. An elastic policy on a rigid trace kind, a sweep that mixes elastic and
rigid policies, and the options of the round-based simulator that the elastic one has no use
for are refused, each naming its option: none of them would run what it says.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import itertools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from apportion.cli.inputs import UsageError, one_line, parse_options

if TYPE_CHECKING:
    import pandas as pd

    from apportion.refdata.sia import ClusterSpec, WorkloadJob

#: Trace kinds whose jobs can run elastic.
ELASTIC_KINDS = ("sia",)
#: ONES's evolutionary search (`simulator.elastic.ones`): it offers no configurations.
ONES_SEARCH_NAME = "ones_search"
#: Sia's scheduling interval, the elastic simulation's round unless told otherwise.
ELASTIC_ROUND_SECONDS = 60.0
#: Options of the round-based simulator (flag, attribute, value when unused).
RIGID_ONLY: tuple[tuple[str, str, Any], ...] = (
    ("--mode", "mode", "auto"),
    ("--http", "http", None),
    ("--round-rule", "round_rule", None),
    ("--round-order", "round_order", None),
    ("--lease-seconds", "lease_seconds", 1200.0),
    ("--call-seconds", "call_seconds", None),
    ("--resolve", "resolve", None),
    ("--events", "events", False),
    ("--preemption-seconds", "preemption_seconds", 0.0),
    ("--overhead", "overhead", "fixed"),
    ("--contention", "contention", "current"),
    ("--service-distribution", "service_distribution", None),
    ("--throughputs", "throughputs", None),
    ("--remaining-noise", "remaining_noise", None),
    ("--remaining-margin", "remaining_margin", None),
    ("--remaining-level", "remaining_level", None),
    ("--remaining-estimator", "remaining_estimator", None),
)

Rows = tuple[list[dict[str, Any]], "pd.DataFrame", "pd.DataFrame"]


def is_elastic(name: str) -> bool:
    """Whether `name` is an elastic policy (or alias) or the elastic baseline."""
    from apportion.simulator.elastic.sweep import ELASTIC_POLICIES, ONES_SEARCH
    from apportion.solver.registry import resolve

    if name == ONES_SEARCH:
        return True
    resolved = resolve(name)
    return resolved is not None and resolved.policy in ELASTIC_POLICIES


def wants_elastic(args: argparse.Namespace) -> bool:
    """True when the arguments name an elastic policy; raises `UsageError` when they also
    name what an elastic run cannot honour (see the module)."""
    names = [n.strip() for n in str(args.policy).split(",") if n.strip()]
    elastic = [n for n in names if is_elastic(n)]
    if not elastic:
        return False
    problems = []
    rigid = [n for n in names if n not in elastic]
    if rigid:
        problems.append(
            f"--policy: {', '.join(elastic)} elastic and {', '.join(rigid)} rigid; "
            "an elastic and a rigid policy run in different simulators: run them apart"
        )
    if args.kind not in ELASTIC_KINDS:
        problems.append(
            f"--policy {elastic[0]}: an elastic policy needs elastic jobs (trace kind "
            f"{', '.join(ELASTIC_KINDS)}); {args.kind} jobs are rigid"
        )
    for flag, attribute, unused in RIGID_ONLY:
        if getattr(args, attribute, unused) != unused:
            problems.append(f"{flag}: not an option of the elastic simulation")
    if getattr(args, "known_start", False) and ONES_SEARCH_NAME in names:
        problems.append(
            f"--known-start: {ONES_SEARCH_NAME} has no belief of a new job's throughput to set"
        )
    if problems:
        raise UsageError("; ".join(problems))
    return True


def elastic_command(args: argparse.Namespace) -> Rows:
    """Every run the arguments describe, in the elastic simulation: (summaries, records,
    time series); raises `UsageError` on bad input."""
    import pandas as pd

    runs = _runs(args)
    rows, records, series = [], [], []
    for run in runs:
        row, frame, timeline = _run(*run)
        rows.append(row)
        labels = {k: row[k] for k in ("policy", "seed", "load")} if len(runs) > 1 else {}
        for position, (name, value) in enumerate(labels.items()):
            frame.insert(position, name, value)
            timeline.insert(position, name, value)
        records.append(frame)
        series.append(timeline)
    return rows, pd.concat(records, ignore_index=True), pd.concat(series, ignore_index=True)


Run = tuple[str, "list[WorkloadJob]", "ClusterSpec", dict[str, Any], int, "float | None", Any]


def _runs(args: argparse.Namespace) -> list[Run]:
    from apportion.simulator.elastic.engine import ElasticConfig

    problems: list[str] = []

    def checked(read: Callable[[], Any]) -> Any:
        try:
            return read()
        except ValueError as exc:
            problems.append(one_line(str(exc)))
            return None

    names = [n.strip() for n in str(args.policy).split(",") if n.strip()]
    options = checked(lambda: parse_options(args.option))
    seeds = checked(lambda: _listed(args.seed, int, "--seed"))
    loads = checked(lambda: _listed(args.load, float, "--load") if args.load else [None])
    cluster = checked(lambda: _cluster(args))
    jobs = checked(lambda: _workload(args))
    round_seconds = args.round_seconds or ELASTIC_ROUND_SECONDS
    config = checked(lambda: _config(round_seconds, args.max_time))
    if cluster is not None and options is not None:
        for name in names:
            checked(functools.partial(_check_options, name, cluster, options))
    if problems:
        raise UsageError("; ".join(problems))
    assert isinstance(config, ElasticConfig)
    label = _label(args)
    return [
        (name, _scaled(jobs, load), cluster, options, seed, load, (config, label, args.known_start))
        for name, seed, load in itertools.product(names, seeds, loads)
    ]


def _run(
    name: str,
    jobs: list[WorkloadJob],
    cluster: ClusterSpec,
    options: dict[str, Any],
    seed: int,
    load: float | None,
    settings: Any,
) -> tuple[dict[str, Any], pd.DataFrame, pd.DataFrame]:
    from apportion.simulator.elastic.engine import simulate_elastic
    from apportion.simulator.elastic.sweep import make_decider

    config, label, known_start = settings
    requests = {job.name: job.num_replicas for job in jobs}
    decider = make_decider(name, cluster, options, seed, requests, known_start)
    result = simulate_elastic(jobs, cluster, decider, config)
    row = {"policy": name, "trace": label, "seed": seed, "load": load}
    row.update(_summary(result.records, result.summary, result.call_seconds, cluster))
    return row, result.records, result.timeseries


def _summary(
    records: pd.DataFrame, summary: dict[str, Any], calls: list[float], cluster: ClusterSpec
) -> dict[str, Any]:
    """The elastic summary under the round-based simulator's names (seconds)."""
    import numpy as np

    jct = records["jct"].dropna().to_numpy()
    span = records["finish"].max() - records["arrival"].min() if len(jct) else None
    capacity = sum(cluster.gpus.values()) * (span or 0.0)

    def quantile(q: float) -> float | None:
        return float(np.quantile(jct, q)) if jct.size else None

    return {
        "jobs": summary["jobs"],
        "finished": summary["finished"],
        "jct_mean": float(jct.mean()) if jct.size else None,
        "jct_p50": quantile(0.5),
        "jct_p95": quantile(0.95),
        "jct_p99": quantile(0.99),
        "makespan": None if span is None else float(span),
        "utilization": float(records["gpu_seconds"].sum() / capacity) if capacity else None,
        "restarts_per_job": summary["restarts_per_job"],
        "gpu_hours_per_job": summary["gpu_hours_per_job"],
        "policy_calls": summary["policy_calls"],
        "policy_seconds": float(sum(calls)),
        "wall_seconds": summary["wall_seconds"],
    }


def _check_options(name: str, cluster: ClusterSpec, options: dict[str, Any]) -> None:
    """The policy takes `options` (a solve of no jobs checks them); ValueError naming the bad
    one otherwise, so a run never goes on with a policy that answers nothing."""
    from apportion.simulator.elastic.sweep import ONES_SEARCH, make_decider
    from apportion.solver.errors import InputError
    from apportion.solver.pipeline import solve
    from apportion.solver.registry import resolve

    if name == ONES_SEARCH:
        try:
            make_decider(name, cluster, options)
        except TypeError as exc:
            raise ValueError(f"-o: {name} takes no such option ({exc})") from None
        return
    resolved = resolve(name)
    assert resolved is not None
    types = [{"name": k, "count": n} for k, n in cluster.gpus.items()]
    try:
        solve({"gpu_types": types, "jobs": []}, policy=resolved.policy, options=options)
    except InputError as exc:
        raise ValueError(f"-o: {exc.one_line(limit=None)}") from None


def _cluster(args: argparse.Namespace) -> ClusterSpec:
    from apportion.simulator.traces.sia import spec_cluster

    if not args.cluster:
        return spec_cluster(None)
    from apportion.cli.simulate_lists import parse_cluster

    try:
        return spec_cluster(parse_cluster(args.cluster), args.gpus_per_node)
    except ValueError as exc:
        raise ValueError(f"--cluster {args.cluster}: {exc}") from None


def _workload(args: argparse.Namespace) -> list[WorkloadJob]:
    from apportion.refdata.sia import read_workload, workload

    if args.jobs is not None and args.jobs < 1:
        raise ValueError(f"--jobs {args.jobs}: at least 1")
    try:
        jobs = read_workload(args.source) if args.source else workload("saturn", 1)
    except (OSError, KeyError, ValueError) as exc:
        raise ValueError(f"{args.source}: not a Sia workload CSV ({one_line(str(exc))})") from None
    jobs = sorted(jobs, key=lambda j: j.time)[: args.jobs]
    if not jobs:
        raise ValueError(f"{args.source}: no jobs")
    return jobs


def _config(round_seconds: float, max_time: float | None) -> Any:
    from apportion.simulator.elastic.engine import ElasticConfig

    if not round_seconds > 0:
        raise ValueError(f"--round-seconds {round_seconds}: must be positive")
    return ElasticConfig(round_seconds=round_seconds, max_time=max_time)


def _scaled(jobs: list[WorkloadJob], load: float | None) -> list[WorkloadJob]:
    """Arrivals `load` times as dense (the first stays where it is)."""
    if load is None or load == 1:
        return jobs
    first = jobs[0].time
    return [dataclasses.replace(j, time=first + (j.time - first) / load) for j in jobs]


def _label(args: argparse.Namespace) -> str:
    from pathlib import Path

    return f"sia:{Path(args.source).stem}" if args.source else "sia"


def _listed(text: str, kind: type[Any], flag: str) -> Sequence[Any]:
    from apportion.cli.simulate_lists import listed

    values = listed(text, kind, flag)
    if kind is float and any(not v > 0 for v in values):
        raise ValueError(f"{flag} {text!r}: must be positive")
    return values
