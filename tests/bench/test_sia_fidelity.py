"""The fidelity bench reads Sia's simulator as it prints, runs it as a real process, and
tabulates the deviation it measures."""

from __future__ import annotations

import sys
from pathlib import Path

from bench.sia_fidelity import Row, Workload, mean_jct, reference, start_rule, table

#: What Sia's `multi_simulator.py` prints after each round (the last dict is the final one).
PRINTED = """Completed jobs:
{'a-0': 100.0}
Average JCT: 100.0
Completed jobs:
{'a-0': 100.0, 'b-1': 300.0}
Average JCT: 200.0
"""

FAKE = """import sys
rows = open(sys.argv[1]).read().splitlines()[1:]
assert sys.argv[2:] == {flags!r}
print(dict((r.split(",")[0], 60.0 * (i + 1)) for i, r in enumerate(rows)))
"""


def test_the_last_printed_jobs_are_averaged() -> None:
    assert mean_jct(PRINTED) == 200.0


def test_the_reference_runs_on_the_first_jobs_with_sias_flags(tmp_path: Path) -> None:
    from bench.sia_fidelity import SIA_FLAGS

    (tmp_path / "multi_simulator.py").write_text(FAKE.format(flags=list(SIA_FLAGS)))
    # 3 jobs get 60, 120, 180 s from the fake simulator: mean 120
    assert reference(Workload("saturn", 1, 3), tmp_path, sys.executable) == 120.0


def test_the_table_counts_what_is_within_five_percent() -> None:
    rows: list[Row] = [
        (Workload("saturn", 1, 15), (3600.0, None), 3700.0),
        (Workload("saturn", 1, 25), (3600.0, 3.0e3), 4.0e3),
    ]
    out = table(rows, ("HiGHS", "CBC"))
    assert "+2.8%" in out and "+11.1%" in out
    assert "against HiGHS: within ±5%: 1 of 2; summed means: +6.9%; worst: +11.1%" in out
    assert "against CBC: within ±5%: 0 of 1; summed means: +33.3%; worst: +33.3%" in out
    assert out.splitlines()[1].startswith("saturn 1, first 15")


def test_a_column_not_run_says_so() -> None:
    rows: list[Row] = [(Workload("saturn", 2, 15), (None, 3600.0), 3600.0)]
    assert "against CBC: not run" in table(rows, ("CBC", "HiGHS"))


CONFIG = """sia_solver_thresh = 1e-4
# implementation idiosyncrasies
sia_read_throughputs_before_first_run = {value}
gavel_default_policy = "max_sum_throughput_perf"
"""


def test_the_start_rule_is_read_from_the_reference_configuration(tmp_path: Path) -> None:
    config = tmp_path / "simulator_config.py"
    config.write_text(CONFIG.format(value=True))
    assert start_rule(tmp_path) == "known"
    config.write_text(CONFIG.format(value=False))
    assert start_rule(tmp_path) == "tie"
    config.write_text("sia_solver_thresh = 1e-4\n")
    assert start_rule(tmp_path) == "tie"
