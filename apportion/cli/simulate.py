"""`solve simulate KIND [SOURCE]`: replay a trace under one or more policies.

One policy, seed and load is one run in this process, with a progress bar on a terminal; more
make a sweep over a process pool. The summary goes to stdout (a table on a terminal, JSON when
piped); `--output`, `--timeseries` and `--summary` write the per-job records, the time series
and the summary. Exit codes as `solve`: 0 done, 1 a policy failed, 2 invalid input.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from apportion.cli.inputs import (
    CommandFailed,
    UsageError,
    check_writable,
    one_line,
    parse_options,
    write_text,
)
from apportion.cli.parser import is_terminal

if TYPE_CHECKING:
    import pandas as pd

    from apportion.simulator.sweep import RunSpec


def simulate_command(args: argparse.Namespace) -> int:
    """Replay a job trace under a policy (or a sweep of them) and report the outcome."""
    from apportion.simulator.clients import PolicyError
    from apportion.solver.errors import InputError

    runs = _runs(args)
    outputs = (
        (args.output, "--output"),
        (args.timeseries, "--timeseries"),
        (args.summary, "--summary"),
    )
    for path, flag in outputs:
        if path is not None:
            check_writable(path, flag)
    try:
        rows, records, series = _single(runs[0], args) if len(runs) == 1 else _sweep(runs, args)
    except InputError as exc:  # a trace file the reader cannot use
        raise UsageError(f"invalid input: {exc.one_line()}") from None
    except PolicyError as exc:
        if exc.invalid_input:
            raise UsageError(f"invalid input: {one_line(str(exc))}") from None
        raise CommandFailed(one_line(str(exc))) from None
    if args.output is not None:
        write_text(args.output, records.to_csv(index=False), "--output")
    if args.timeseries is not None:
        write_text(args.timeseries, series.to_csv(index=False), "--timeseries")
    document = json.dumps([_plain(row) for row in rows], indent=2)
    if args.summary is not None:
        write_text(args.summary, document, "--summary")
    _print(rows, args, document)
    return 0


def _runs(args: argparse.Namespace) -> list[RunSpec]:
    from apportion.simulator.config import Mode, Resolve, SimConfig
    from apportion.simulator.policies import check_policy
    from apportion.simulator.sources import TraceSpec
    from apportion.simulator.sweep import SweepSpec

    try:
        policies = tuple(_listed(args.policy, str, "--policy"))
        for name in policies:
            check_policy(name)
        config = SimConfig(
            options=parse_options(args.option),
            mode=Mode(args.mode),
            round_seconds=args.round_seconds,
            round_rule=args.round_rule,
            lease_seconds=args.lease_seconds,
            call_seconds=args.call_seconds,
            resolve=Resolve.parse(args.resolve) if args.resolve else None,
            preemption_seconds=args.preemption_seconds,
            http=args.http,
            max_time=args.max_time,
        )
        trace = TraceSpec(
            args.kind,
            source=args.source,
            jobs=args.jobs,
            cluster=_cluster(args.cluster) if args.cluster else None,
            gpus_per_node=args.gpus_per_node,
        )
        seeds = tuple(_listed(args.seed, int, "--seed"))
        loads: tuple[float | None, ...] = (
            tuple(_listed(args.load, float, "--load")) if args.load else (None,)
        )
        if args.kind == "poisson" and args.source is None and args.load is None:
            raise ValueError("poisson needs a rate: give SOURCE (jobs per hour) or --load")
        if args.kind != "poisson" and args.source is not None and not Path(args.source).exists():
            raise ValueError(f"{args.source}: no such trace file")
        return SweepSpec(policies, (trace,), seeds, loads, config).runs()
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _listed(text: str, kind: type[Any], flag: str) -> list[Any]:
    try:
        return [kind(part.strip()) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ValueError(f"{flag} {text!r}: expected comma-separated {kind.__name__}s") from None


def _cluster(text: str) -> dict[str, int]:
    cluster = {}
    for part in text.split(","):
        name, sep, count = part.partition("=")
        if not sep or not name.strip() or not count.strip().isdigit() or int(count) < 1:
            raise ValueError(f"--cluster {text!r}: expected TYPE=GPUS,... with whole GPU counts")
        cluster[name.strip()] = int(count)
    return cluster


def _single(
    run: RunSpec, args: argparse.Namespace
) -> tuple[list[dict[str, Any]], pd.DataFrame, pd.DataFrame]:
    from rich.console import Console

    from apportion.simulator.engine import simulate
    from apportion.simulator.report import simulation_progress

    trace = run.trace.load_trace()
    if args.no_progress or not is_terminal():
        result = simulate(trace, run.config)
    else:
        label = f"{run.config.policy} on {trace.name}"
        with simulation_progress(label, len(trace.jobs), Console(stderr=True)) as update:
            result = simulate(trace, run.config, progress=update)
    return [{**run.labels(), **result.summary}], result.records, result.timeseries


def _sweep(
    runs: list[RunSpec], args: argparse.Namespace
) -> tuple[list[dict[str, Any]], pd.DataFrame, pd.DataFrame]:
    import pandas as pd
    from rich.console import Console

    from apportion.simulator.report import sweep_progress
    from apportion.simulator.sweep import run_sweep

    if args.no_progress or not is_terminal():
        done = run_sweep(runs, workers=args.workers)
    else:
        with sweep_progress(len(runs), Console(stderr=True)) as on_done:
            done = run_sweep(runs, workers=args.workers, on_done=on_done)
    series = []
    for run, result in zip(done.runs, done.results, strict=True):
        frame = result.timeseries.copy()
        for position, (name, value) in enumerate(run.labels().items()):
            frame.insert(position, name, value)
        series.append(frame)
    rows = [{str(k): v for k, v in row.items()} for row in done.summary().to_dict("records")]
    return rows, done.records(), pd.concat(series, ignore_index=True)


def _plain(row: dict[str, Any]) -> dict[str, Any]:
    """JSON-ready: numpy scalars as Python numbers, NaN as null."""
    out = {}
    for key, value in row.items():
        item = value.item() if hasattr(value, "item") else value
        out[str(key)] = None if isinstance(item, float) and math.isnan(item) else item
    return out


def _print(rows: list[dict[str, Any]], args: argparse.Namespace, document: str) -> None:
    chosen = args.output_format or ("table" if is_terminal() else "json")
    if chosen == "json":
        print(document)
        return
    from rich.console import Console

    from apportion.simulator.report import summary_table

    labels = ["policy", "trace"] + [n for n in ("seed", "load") if len({r[n] for r in rows}) > 1]
    # A pipe gets the whole table; a terminal as many columns as fit.
    console = Console(width=None if is_terminal() else 200)
    console.print(summary_table(rows, labels, console.width))
