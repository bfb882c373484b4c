"""The Chronus fidelity bench: the trace it exports, how it reads Chronus's job table and log,
the reference run as a real process (with the MILP stand-in imported as `mip`), and its table."""

from __future__ import annotations

import csv
import itertools
from pathlib import Path

import pytest

from bench import chronus_mip as mip
from bench.chronus_fidelity import FLAGS, Figure, export, render, row, score, theirs

HEADER = "job_id,user,num_gpu,submit_time,duration,expect_time_list,best_effort,job_type"


def test_export_keeps_the_first_jobs_with_gpus_spread_to_whole_minutes(tmp_path: Path) -> None:
    source = tmp_path / "trace.csv"
    source.write_text(
        "\n".join(
            [
                HEADER,
                "1,u,1,6,128,200,0,strict",
                "2,u,0,1,50,100,0,strict",  # no GPUs: left out
                "3,u,1,2,64,100,0,strict",
                "4,u,2,4,32,4,1,best",
                "5,u,1,9,10,50,0,strict",  # the fourth job with GPUs: past `jobs`
            ]
        )
    )
    out = tmp_path / "out.csv"
    export(source, out, jobs=3)
    rows = list(csv.DictReader(out.read_text().splitlines()))
    # GPU-minutes 64 + 64 + 128 = 256 over 32 GPUs at 80 % = 10 minutes of arrivals, which
    # span 6 − 2 = 4 minutes in the file: stretched 2.5 times, from 0.
    assert [r["job_id"] for r in rows] == ["3", "4", "1"]
    assert [r["submit_time"] for r in rows] == ["0", "5", "10"]
    assert rows[1]["expect_time_list"] == "4" and rows[2]["duration"] == "128"


TABLE = """job_id,submit_time,end_time,miss_ddl,best_effort
1,0,50,0.0,0
2,0,90,0.2,0
3,10,200,1.0,0
4,10,200,1,0
5,0,30,0,1
6,20,110,0,1
"""

LOG = """x INFO: starting add job, solution info True
x INFO: pass_fast_check True, existing solution info True
x INFO: ---- job[1], gpu [1] is added  at time[0]
x INFO: pass_fast_check True, existing solution info True
x INFO: ---- job[3], gpu [1] is added  at time[10]
x INFO: pass_fast_check False, existing solution info True
x INFO: no existing solution and malicious user behavior, job_id 4
x INFO: ---- job[4], gpu [1] is added  at time[10]
x INFO: ---- job[5], gpu [1] is added  at time[0]
"""


def test_scores_are_chronus_schedule_summary_and_its_log() -> None:
    figure = score(TABLE, LOG)
    # miss_ddl 0, 0.2, 1, 1 over the SLO jobs: 1 − 2.2 / 4; best-effort JCT (30 + 90) / 2 min.
    assert figure.satisfaction == pytest.approx(0.45)
    assert figure.best_effort_jct_h == pytest.approx(1.0)
    # 1 and 3 passed the check at arrival (4 was declined, 5 is best-effort); 3 missed.
    assert (figure.admitted, figure.admitted_missed) == (2, 1)


FAKE_MAIN = """import sys, os
import mip
args = dict(a[2:].split("=", 1) for a in sys.argv[1:])
assert [a for a in sys.argv[1:] if a.split("=")[0] in {flags}] == {expected}
m = mip.Model(solver_name=mip.GRB)
x = [m.add_var(var_type=mip.BINARY) for _ in range(2)]
m.objective = mip.maximize(mip.xsum([x[0], x[1]]))
m += x[0] + x[1] <= 1
m.optimize(max_seconds=5)
assert x[0].x + x[1].x == 1.0
os.makedirs("log", exist_ok=True)
open(os.path.join("log", "time-aware-with-lease_local_search_" + args["ident"] + ".log"),
     "w").write(open("fake.log").read())
os.makedirs(args["save_log_dir"], exist_ok=True)
rows = open(args["trace"]).read()
open(os.path.join(args["save_log_dir"], "time-aware-with-lease.csv"), "w").write(rows)
"""


def test_the_reference_runs_with_the_artifacts_flags_and_the_mip_stand_in(
    tmp_path: Path,
) -> None:
    code = tmp_path / "code"
    code.mkdir()
    names = {flag.split("=")[0] for flag in FLAGS}
    (code / "main.py").write_text(FAKE_MAIN.format(flags=sorted(names), expected=list(FLAGS)))
    (code / "fake.log").write_text(LOG)
    trace = tmp_path / "mix1_300.csv"
    trace.write_text(TABLE)  # the fake simulator answers with its input: the table above
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    figure = theirs(code, trace, 2, scratch)
    assert figure == score(TABLE, LOG)
    assert (scratch / "mix1_300_n2" / "time-aware-with-lease.csv").exists()


def test_the_table_counts_runs_within_three_percent() -> None:
    rows = [
        row("MIX1", 16, Figure(0.92, 7.0, 160, 0), Figure(0.90, 7.5, 170, 2), "recorded"),
        row("SLO", 32, Figure(0.95, None, 250, 0), Figure(0.90, None, 240, 3), "recorded"),
    ]
    assert rows[0]["within_target"] and not rows[1]["within_target"]
    out = render(rows)
    assert "1.022" in out and "0.93" in out and "160/170" in out and "0/3" in out
    assert out.splitlines()[-1] == "satisfaction within ±3% of Chronus's: 1 of 2 runs"


def test_the_mip_stand_in_finds_the_optimum_brute_force_finds() -> None:
    value, weight, capacity = (3, 4, 5, 6), (2, 3, 4, 5), 7
    m = mip.Model(solver_name=mip.GRB)
    x = [m.add_var(var_type=mip.BINARY) for _ in value]
    m.objective = mip.maximize(mip.xsum(v * xi for v, xi in zip(value, x, strict=True)))
    m += mip.xsum(w * xi for w, xi in zip(weight, x, strict=True)) <= capacity
    m.optimize(max_seconds=5)
    best = max(
        sum(v for v, on in zip(value, pick, strict=True) if on)
        for pick in itertools.product((0, 1), repeat=len(value))
        if sum(w for w, on in zip(weight, pick, strict=True) if on) <= capacity
    )
    found = sum(v * (xi.x or 0.0) for v, xi in zip(value, x, strict=True))
    assert found == best == 9  # 3 + 6 (weights 2 + 5) or 4 + 5 (3 + 4)


def test_an_infeasible_model_leaves_every_value_unset_as_python_mip_does() -> None:
    m = mip.Model()
    x = m.add_var(var_type=mip.BINARY)
    m.objective = mip.maximize(x)
    m += x >= 2
    m.optimize()
    assert x.x is None
