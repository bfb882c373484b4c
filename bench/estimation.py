"""Throughput estimation on Gavel's co-location table (bench rows of `estimation`): leave one
job type out, profile it alone on every GPU type and beside the `measured` reference types the
estimator suggests, complete its row, and score its other pairs (both members' steps/s, cells
whose truth is 0 left out) against the table. Target: the median relative error ≤ 0.5 × the
naive guess's (each cell the other types' mean co-location ratio beside the same partner);
`ratio` is ours ÷ naive, the note has both medians, the worst type's and the share of cells
whose truth lies in the estimate's 95 % interval, and the median error of Gavel's own rule
(the new job read as the reference type nearest its completed row). `python -m
bench.estimation` prints the per-type table of the three-pair case as well.

Simulations (truth apart from belief): max-min on Gavel's physical trace and on Poisson traces
at three loads, the policy told every throughput times a seeded lognormal error of σ = 0.3;
average JCT over three noise seeds of `online` (the belief learned from observed progress)
against `oracle` (told the truth), target ≤ 1.03 ×, with `none` (the first belief kept) beside
it.

Deadline admission told remaining times with σ = 0.3 (`simulator.remaining_study`): one row per
(Chronus trace, cluster size), the margin derived from σ against the oracle (told the truth):
satisfaction ÷ the oracle's (target ≥ 0.97) with 0 guarantees broken or missed; the note has
the same without the margin (the cost of ignoring the error) and both learned online. At the
small size (default) the first 120 jobs of MIX2 on 16 GPUs, one noise seed; `APPORTION_FULL=1`:
MIX1, MIX2 and SLO (every job of their first two hours) on 16, 24 and 48 GPUs, noise seeds 0,
1, 2."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import numpy as np

from apportion.estimation.evaluation import Held, leave_one_out
from apportion.refdata.synthetic import load_gavel_table
from apportion.simulator import remaining_study as noisy
from apportion.simulator.config import SimConfig
from apportion.simulator.engine import simulate
from apportion.simulator.sources import TraceSpec
from apportion.simulator.sweep import run_one
from bench.harness import Case, Row

TARGET_RATIO = 0.5
#: Simulations: max-min told throughputs with a lognormal error of σ = 0.3; `online` within
#: 3 % of `oracle`'s average JCT; three noise seeds per trace.
SIGMA = 0.3
SEEDS = (0, 1, 2)
TARGET_JCT = 1.03
POISSON_JOBS = 150
FULL = os.environ.get("APPORTION_FULL") == "1"
#: Remaining times: (trace, GPUs) pairs, jobs per trace (None: all) and noise seeds.
DEADLINE_CASES = [(t, g) for t in noisy.TRACES for g in (16, 24, 48)] if FULL else [("MIX2", 16)]
DEADLINE_JOBS = None if FULL else 120
DEADLINE_SEEDS = noisy.SEEDS if FULL else (0,)


def _figures(held: list[Held]) -> tuple[float, float, float, str]:
    errors = np.concatenate([h.errors for h in held])
    naive = np.concatenate([h.naive for h in held])
    covered = sum(h.covered for h in held) / len(errors)
    matched = np.concatenate([h.matched for h in held])
    worst = max(held, key=lambda h: float(np.median(h.errors)))
    note = (
        f"median error {np.median(errors):.3f} vs naive {np.median(naive):.3f}, "
        f"nearest type's row {np.median(matched):.3f}; "
        f"worst {worst.job_type} {np.median(worst.errors):.3f}; "
        f"95 % interval holds {covered:.1%} of {len(errors)} cells"
    )
    return float(np.median(errors)), float(np.median(naive)), covered, note


def _runner(scale_factor: int, measured: int) -> Callable[[Case], Row]:
    def run(case: Case) -> Row:
        started = time.perf_counter()
        held = leave_one_out(load_gavel_table(), scale_factor=scale_factor, measured=measured)
        seconds = time.perf_counter() - started
        ours, naive, _, note = _figures(held)
        ratio = ours / naive
        return Row(
            case=case,
            jobs=len(held),
            types=3,
            validate=0.0,
            build=0.0,
            solve=seconds,
            total=seconds,
            objective=ours,
            status="met" if ratio <= TARGET_RATIO else "missed",
            backend="estimation",
            ratio=ratio,
            note=note,
        )

    return run


def _jct(spec: TraceSpec, estimator: str) -> tuple[float, float]:
    """The average JCT over the seeds, and the belief's mean error over the calls."""
    jcts, errors = [], []
    for seed in SEEDS:
        config = SimConfig(throughput_noise=SIGMA, estimator=estimator, seed=seed)
        summary = simulate(spec.load_trace(), config).summary
        jcts.append(float(summary["jct_mean"]))
        errors.append(float(summary.get("estimate_error_mean", 0.0)))
    return float(np.mean(jcts)), float(np.mean(errors))


def _simulated(spec: TraceSpec) -> Callable[[Case], Row]:
    def run(case: Case) -> Row:
        started = time.perf_counter()
        oracle, _ = _jct(spec, "oracle")
        none, none_error = _jct(spec, "none")
        online, online_error = _jct(spec, "online")
        seconds = time.perf_counter() - started
        ratio = online / oracle
        return Row(
            case=case,
            jobs=len(spec.load_trace().jobs),
            types=3,
            validate=0.0,
            build=0.0,
            solve=seconds,
            total=seconds,
            objective=online,
            status="met" if ratio <= TARGET_JCT else "missed",
            backend="simulator",
            ratio=ratio,
            note=f"avg JCT online {online:.0f} s, none {none:.0f} s ({none / oracle:.3f}×), "
            f"oracle {oracle:.0f} s; belief's mean |log error| online {online_error:.3f}, "
            f"none {none_error:.3f}",
        )

    return run


def _deadlines(trace: str, gpus: int) -> Callable[[Case], Row]:
    def run(case: Case) -> Row:
        started = time.perf_counter()
        runs = noisy.runs(
            {trace: noisy.TRACES[trace]}, (gpus,), DEADLINE_JOBS, seeds=DEADLINE_SEEDS
        )
        frame = noisy.table(runs, [run_one(r.spec) for r in runs])
        seconds = time.perf_counter() - started
        checks = noisy.targets(frame).set_index("arm")
        ours = checks.loc["margin"]

        def said(arm: str) -> str:
            row = checks.loc[arm]
            return f"{arm} {row['vs_oracle']:.3f}× / {row['broken']} broken {row['missed']} missed"

        return Row(
            case=case,
            jobs=len(runs[0].spec.trace.load_trace().jobs),
            types=1,
            validate=0.0,
            build=0.0,
            solve=seconds,
            total=seconds,
            objective=float(ours["satisfaction"]),
            status="met" if ours["met"] else "missed",
            backend="simulator",
            ratio=float(ours["vs_oracle"]),
            note=f"oracle satisfaction {ours['oracle']:.4f}; δ = {frame['margin'].max():.2f}; "
            + "; ".join(said(a) for a in checks.index),
        )

    return run


def cases() -> list[Case]:
    # Gavel measured pairs of single-GPU jobs only (its multi-GPU pairs are all 0).
    grid = [(1, 1), (1, 2), (1, 3), (1, 5)]
    return (
        [
            Case(
                "estimation",
                f"leave one type out, scale factor {sf}, {m} measured pair{'s' if m > 1 else ''}",
                dict,
                "estimate",
                runner=_runner(sf, m),
            )
            for sf, m in grid
        ]
        + [
            Case(
                "estimation",
                f"max-min told throughputs at σ = {SIGMA}: {name}, online ÷ oracle avg JCT",
                dict,
                "max_min_fairness",
                runner=_simulated(spec),
            )
            for name, spec in (
                ("Gavel's physical trace", TraceSpec("gavel")),
                *(
                    (
                        f"{POISSON_JOBS} Poisson jobs at {rate:g}/h",
                        TraceSpec("poisson", jobs=POISSON_JOBS, load=rate),
                    )
                    for rate in (2.0, 3.0, 4.0)
                ),
            )
        ]
        + [
            Case(
                "estimation",
                f"deadline admission told remaining times at σ = {noisy.SIGMA}: {trace}, "
                f"{gpus} GPUs, margin vs oracle",
                dict,
                "deadline_admission",
                runner=_deadlines(trace, gpus),
            )
            for trace, gpus in DEADLINE_CASES
        ]
    )


def per_type() -> None:
    """The three-pair case at scale factor 1, one line per held-out type."""
    held = leave_one_out(load_gavel_table(), scale_factor=1, measured=3)
    print(f"{'held-out type':34} {'ours':>6} {'naive':>6} {'ratio':>6}  measured beside")
    for h in held:
        ours, naive = float(np.median(h.errors)), float(np.median(h.naive))
        pairs = ", ".join(f"{p} on {g}" for p, g in h.measured)
        print(f"{h.job_type:34} {ours:6.3f} {naive:6.3f} {ours / naive:6.2f}  {pairs}")
    print(_figures(held)[3])


if __name__ == "__main__":
    from bench.harness import print_table, run_case

    print_table([run_case(c) for c in cases()])
    per_type()
