"""Throughput estimation on Gavel's co-location table (bench rows of `estimation`): leave one
job type out, profile it alone on every GPU type and beside the `measured` reference types the
estimator suggests, complete its row, and score its other pairs (both members' steps/s, cells
whose truth is 0 left out) against the table. Target: the median relative error ≤ 0.5 × the
naive guess's (each cell the other types' mean co-location ratio beside the same partner);
`ratio` is ours ÷ naive, the note has both medians, the worst type's and the share of cells
whose truth lies in the estimate's 95 % interval, and the median error of Gavel's own rule
(the new job read as the reference type nearest its completed row). `python -m
bench.estimation` prints the per-type table of the three-pair case as well."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from apportion.estimation.evaluation import Held, leave_one_out
from apportion.refdata.synthetic import load_gavel_table
from bench.harness import Case, Row

TARGET_RATIO = 0.5


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


def cases() -> list[Case]:
    # Gavel measured pairs of single-GPU jobs only (its multi-GPU pairs are all 0).
    grid = [(1, 1), (1, 2), (1, 3), (1, 5)]
    return [
        Case(
            "estimation",
            f"leave one type out, scale factor {sf}, {m} measured pair{'s' if m > 1 else ''}",
            dict,
            "estimate",
            runner=_runner(sf, m),
        )
        for sf, m in grid
    ]


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
