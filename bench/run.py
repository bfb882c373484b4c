"""Run the benchmarks and print one table.

python -m bench.run                 # everything
python -m bench.run --only water    # rows whose group or name contains "water"
"""

from __future__ import annotations

import argparse

from apportion.solver import solve
from bench import (
    backends,
    deadlines,
    elastic,
    estimation,
    explain,
    fleet,
    fleet_level,
    max_min,
    notebooks,
    objectives,
    placement,
    recovery,
    robust,
    rounds,
    service,
    simulator,
    small_calls,
    startup,
    tiresias,
    water_filling,
    windows,
)
from bench.harness import Case, print_table, run_case

SUITES = [
    startup,
    service,
    recovery,
    max_min,
    fleet,
    fleet_level,
    small_calls,
    water_filling,
    objectives,
    robust,
    deadlines,
    placement,
    elastic,
    tiresias,
    backends,
    simulator,
    rounds,
    notebooks,
    explain,
    estimation,
    windows,
]


def all_cases() -> list[Case]:
    return [case for suite in SUITES for case in suite.cases()]


def warm_up() -> None:
    """One tiny solve before timing: the process's first call pays one-off costs (pydantic's
    validators, loading the solver libraries) that a running service pays once, not per request."""
    solve(
        {"gpu_types": [{"name": "g", "count": 1}], "jobs": [{"id": "j", "throughput": {"g": 1.0}}]}
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", default="", help="substring of group or case name")
    args = parser.parse_args()
    wanted = [c for c in all_cases() if args.only in c.group or args.only in c.name]
    warm_up()
    print_table([run_case(c) for c in wanted])


if __name__ == "__main__":
    main()
