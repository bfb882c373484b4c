"""Run the benchmarks and print one table.

python -m bench.run                 # everything
python -m bench.run --only water    # rows whose group or name contains "water"
"""

from __future__ import annotations

import argparse

from bench import max_min, placement
from bench.harness import Case, print_table, run_case

SUITES = [max_min, placement]


def all_cases() -> list[Case]:
    return [case for suite in SUITES for case in suite.cases()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", default="", help="substring of group or case name")
    args = parser.parse_args()
    wanted = [c for c in all_cases() if args.only in c.group or args.only in c.name]
    print_table([run_case(c) for c in wanted])


if __name__ == "__main__":
    main()
