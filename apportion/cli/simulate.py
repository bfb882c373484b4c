"""`solve simulate KIND [SOURCE]`: replay a trace under one or more policies.

One policy, seed and load is one run in this process, with a progress bar on a terminal; more
make a sweep over a process pool. An elastic policy on Sia's workloads runs the elastic
simulation (`simulate_elastic`). The summary goes to stdout (a table on a terminal, JSON when
piped); `--output`, `--timeseries` and `--summary` write the per-job records, the time series
and the summary. Exit codes as `solve`: 0 done, 1 a policy failed, 2 invalid input.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from apportion.cli.inputs import (
    CommandFailed,
    UsageError,
    check_writable,
    one_line,
    parse_options,
    write_text,
)
from apportion.cli.parser import is_terminal
from apportion.cli.simulate_lists import listed, parse_cluster
from apportion.cli.simulate_notes import idle_note
from apportion.cli.simulate_remaining import remaining

if TYPE_CHECKING:
    from concurrent.futures import Executor

    import pandas as pd

    from apportion.simulator.config import SimConfig
    from apportion.simulator.sweep import RunSpec

T = TypeVar("T")


def simulate_command(args: argparse.Namespace) -> int:
    """Replay a job trace under a policy (or a sweep of them) and report the outcome."""
    from apportion.cli.simulate_elastic import elastic_command, wants_elastic
    from apportion.simulator.clients import PolicyError
    from apportion.solver.errors import InputError

    elastic = wants_elastic(args)
    runs = [] if elastic else _runs(args)
    outputs = (
        (args.output, "--output"),
        (args.timeseries, "--timeseries"),
        (args.summary, "--summary"),
    )
    for path, flag in outputs:
        if path is not None:
            check_writable(path, flag)
    try:
        if elastic:
            rows, records, series = elastic_command(args)
        elif len(runs) == 1:
            rows, records, series = _single(runs[0], args)
        else:
            rows, records, series = _sweep(runs, args)
    except InputError as exc:  # a trace file the reader cannot use
        raise UsageError(f"invalid input: {exc.one_line(limit=None)}") from None
    except ValueError as exc:  # settings the trace refuses (a mode its placement rules forbid)
        raise UsageError(f"invalid input: {one_line(str(exc))}") from None
    except PolicyError as exc:
        if exc.invalid_input:
            raise UsageError(f"invalid input: {one_line(str(exc))}") from None
        raise CommandFailed(one_line(str(exc))) from None
    document = json.dumps([_plain(row) for row in rows], indent=2)
    _write(args, records, series, document)
    _print(rows, args, document)
    note = idle_note(rows, runs[0]) if runs else ""  # elastic runs are sized by Sia's cluster
    if note:
        print(note, file=sys.stderr)
    return 0


def _write(args: argparse.Namespace, records: Any, series: Any, document: str) -> None:
    if args.output is not None:
        write_text(args.output, records.to_csv(index=False), "--output")
    if args.timeseries is not None:
        write_text(args.timeseries, series.to_csv(index=False), "--timeseries")
    if args.summary is not None:
        write_text(args.summary, document, "--summary")


def _runs(args: argparse.Namespace) -> list[RunSpec]:
    """Every run the arguments describe; a `UsageError` lists every bad argument at once."""
    from apportion.simulator.sources import TraceSpec
    from apportion.simulator.sweep import SweepSpec

    problems: list[str] = []

    def checked(read: Callable[[], T]) -> T | None:
        try:
            return read()
        except ValueError as exc:
            problems.append(str(exc))
            return None

    policies = checked(lambda: _policies(args.policy, parse_options(args.option)))
    config = checked(lambda: _config(args))
    seeds = checked(lambda: tuple(listed(args.seed, int, "--seed")))
    loads = checked(lambda: _loads(args))
    cluster = checked(lambda: parse_cluster(args.cluster)) if args.cluster else None
    throughputs = checked(lambda: _throughputs(args.throughputs))
    trace = None
    if (not args.cluster or cluster is not None) and (not args.throughputs or throughputs):
        trace = checked(
            lambda: TraceSpec(
                args.kind,
                source=args.source,
                jobs=args.jobs,
                cluster=cluster,
                gpus_per_node=args.gpus_per_node,
                throughputs=throughputs,
            )
        )
    checked(lambda: _source(args))
    if problems or policies is None or config is None or seeds is None or loads is None:
        raise UsageError("; ".join(problems))
    assert trace is not None
    _notes(policies)
    try:
        return SweepSpec(policies, (trace,), seeds, loads, config).runs()
    except ValueError as exc:  # settings a policy refuses (a belief outside rounds mode)
        raise UsageError(one_line(str(exc))) from None


def _policies(text: str, options: dict[str, Any]) -> tuple[str, ...]:
    """The policies named, each known (one error lists every unknown name)."""
    from apportion.simulator.policies import check_policy, policy_names
    from apportion.solver.errors import did_you_mean
    from apportion.solver.registry import GAVEL_MISSING, NAMES, unknown_policy

    names = tuple(listed(text, str, "--policy"))
    unknown = []
    for name in names:
        try:
            check_policy(name)
        except ValueError:
            unknown.append(name)
    clashes = [_clash(name, options) for name in names if name not in unknown]
    if any(clashes):
        raise ValueError("; ".join(c for c in clashes if c))
    if unknown:
        missing = [unknown_policy(n) for n in unknown if n.lower() in GAVEL_MISSING]
        known = [*policy_names(), *NAMES]
        other = [
            repr(n) + did_you_mean(n, known) for n in unknown if n.lower() not in GAVEL_MISSING
        ]
        if other:
            missing.append(
                f"unknown policy {', '.join(other)}; choose one of {', '.join(policy_names())} "
                "(or an alias: solve policies)"
            )
        raise ValueError("; ".join(missing))
    return names


def _clash(name: str, options: dict[str, Any]) -> str:
    """Why `options` contradict what the policy's name implies ("" when they do not)."""
    from apportion.simulator.policies import implied_options

    _, implied = implied_options(name)
    return "; ".join(
        f"-o {key}: policy {name!r} implies {key}={json.dumps(value)}"
        for key, value in implied.items()
        if key in options and options[key] != value
    )


def _notes(policies: tuple[str, ...]) -> None:
    """Say on stderr how each foreign policy name (Gavel's) is read."""
    import sys

    from apportion.solver.registry import resolve

    for name in policies:
        resolved = resolve(name)
        if resolved is not None and resolved.note:
            sys.stderr.write(f"note: {resolved.note}\n")


def _config(args: argparse.Namespace) -> SimConfig:
    from apportion.simulator.config import Contention, Mode, Resolve, SimConfig

    # Left unset, the round's rule and order are the simulator's own defaults.
    serving = {"round_rule": args.round_rule, "round_order": args.round_order}
    return SimConfig(
        options=parse_options(args.option),
        mode=Mode(args.mode),
        round_seconds=SimConfig.round_seconds if args.round_seconds is None else args.round_seconds,
        **{key: value for key, value in serving.items() if value is not None},
        lease_seconds=args.lease_seconds,
        call_seconds=args.call_seconds,
        resolve=Resolve.parse(args.resolve) if args.resolve else None,
        preemption_seconds=args.preemption_seconds,
        overhead_model=args.overhead,
        contention=Contention(args.contention),
        http=args.http,
        max_time=args.max_time,
        events=args.events,
        snapshot_fields=_service_distribution(args.service_distribution),
        **_noise(args.throughput_noise),
        estimator=args.estimator,
        **remaining(args),
    )


def _noise(text: str) -> dict[str, Any]:
    """`--throughput-noise`: a σ ≥ 0, or `gavel` (Gavel's measured ÷ oracle table)."""
    if text.strip().lower() == "gavel":
        return {"noise_source": "gavel"}
    try:
        return {"throughput_noise": float(text)}
    except ValueError:
        raise ValueError(f"--throughput-noise: {text!r} is neither a number nor 'gavel'") from None


def _loads(args: argparse.Namespace) -> tuple[float | None, ...]:
    if args.kind == "poisson" and args.source is None and args.load is None:
        raise ValueError("poisson needs a rate: give SOURCE (jobs per hour) or --load")
    return tuple(listed(args.load, float, "--load")) if args.load else (None,)


def _source(args: argparse.Namespace) -> None:
    if args.known_start:
        raise ValueError("--known-start: an option of elastic policies only (sia traces)")
    if args.kind != "poisson" and args.source is not None and not Path(args.source).exists():
        raise ValueError(f"{args.source}: no such trace file")


def _throughputs(path: Path | None) -> str | None:
    if path is None:
        return None
    if not path.is_file():
        raise ValueError(f"--throughputs {path}: no such file")
    if _own_table(path):
        raise ValueError(
            f"--throughputs {path}: this table is in apportion's own format (gpu_types, "
            "job_types), the bundled default: leave --throughputs out to use it; --throughputs "
            'takes Gavel\'s format, {worker type: {"(\'model\', scale factor)": {"null": steps/s, '
            "...}}}, e.g. apportion/refdata/source/gavel_throughputs_sample.json"
        )
    return str(path)


#: A throughputs file larger than this is not read twice (Gavel's own table is about 1.2 MB).
PEEK_BYTES = 64 * 2**20


def _own_table(path: Path) -> bool:
    """Whether `path` holds a table in the project's compact format (`GavelTable.to_compact`),
    which a newcomer may take for Gavel's: its top-level keys are `gpu_types` and `job_types`."""
    try:
        if path.stat().st_size > PEEK_BYTES:
            return False
        document = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return False  # the reader says what is wrong with it
    return isinstance(document, dict) and {"gpu_types", "job_types"} <= document.keys()


def _service_distribution(source: str | None) -> dict[str, Any]:
    """`--service-distribution`: the snapshot field Tiresias's 2D-Gittins reads."""
    if source is None:
        return {}
    from apportion.refdata.tiresias import YARN_SAMPLES, yarn_distribution

    path = YARN_SAMPLES if source == "yarn" else Path(source)
    if not path.exists():
        raise ValueError(f"--service-distribution: {source}: no such file (or say yarn)")
    try:
        return {"service_distribution": yarn_distribution(path)}
    except (KeyError, ValueError) as exc:
        problem = f"--service-distribution: {source}: not a CSV of durations ({exc})"
        raise ValueError(problem) from None


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

    pool = _executor(args)
    try:
        if args.no_progress or not is_terminal():
            done = run_sweep(runs, pool, workers=args.workers)
        else:
            with sweep_progress(len(runs), Console(stderr=True)) as bar:
                done = run_sweep(
                    runs, pool, workers=args.workers, on_start=bar.started, on_done=bar.done
                )
    finally:
        if pool is not None:
            pool.shutdown()
    series = []
    for run, result in zip(done.runs, done.results, strict=True):
        frame = result.timeseries.copy()
        for position, (name, value) in enumerate(run.labels().items()):
            frame.insert(position, name, value)
        series.append(frame)
    rows = [{str(k): v for k, v in row.items()} for row in done.summary().to_dict("records")]
    return rows, done.records(), pd.concat(series, ignore_index=True)


def _executor(args: argparse.Namespace) -> Executor | None:
    """`--executor`: None for the sweep's own process pool."""
    from apportion.simulator.executors import ExecutorUnavailable, make_executor

    try:
        return make_executor(args.executor, args.workers, args.ray_address)
    except ExecutorUnavailable as exc:
        if exc.missing:
            raise UsageError(f"--executor {args.executor}: {exc}") from None
        raise CommandFailed(f"--executor {args.executor}: {one_line(str(exc))}") from None


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
    from apportion.cli.render import Screen
    from apportion.simulator.report import summary_table

    labels = ["policy", "trace"] + [n for n in ("seed", "load") if len({r[n] for r in rows}) > 1]
    # A pipe gets the whole table; a terminal as many columns as fit.
    console = Screen(width=None if is_terminal() else 200)
    console.print(summary_table(rows, labels, console.width))
