"""`solve simulate sia` under elastic policies: the elastic simulation runs (jobs start, finish,
records and summary agree with each other and with the simulator called directly), and every
combination that would run something else than it says is refused with exit 2 naming its
option."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from apportion.refdata import sia
from apportion.simulator.elastic.engine import ElasticConfig, simulate_elastic
from apportion.simulator.elastic.policies import ApportionElastic
from tests.cli.command import run


def test_sia_runs_the_elastic_simulation_with_records_and_summary(tmp_path: Path) -> None:
    names = (("--output", "r.csv"), ("--summary", "s.json"), ("--timeseries", "t.csv"))
    files = {flag: tmp_path / name for flag, name in names}
    flags = [part for flag, path in files.items() for part in (flag, str(path))]
    ran = run("simulate", "sia", "--policy", "sia", "--jobs", "3", "--format", "json", *flags)
    assert ran.returncode == 0, ran.stderr
    (row,) = json.loads(ran.stdout)
    assert json.loads(files["--summary"].read_text()) == [row]
    records = pd.read_csv(files["--output"])
    assert row["policy"] == "sia" and row["finished"] == 3 == len(records)
    # every job started, at a decision of a 60-s round (Sia's interval), and finished
    assert records["first_start"].notna().all() and (records["first_start"] % 60 == 0).all()
    assert row["jct_mean"] == pytest.approx((records["finish"] - records["arrival"]).mean())
    series = pd.read_csv(files["--timeseries"])
    assert len(series) == row["policy_calls"]
    assert series["gpus_busy"].max() > 0 and series["gpus_busy"].max() <= 64
    # the same figures as the simulator called directly
    jobs = sia.workload("saturn", 1)[:3]
    direct = simulate_elastic(jobs, sia.SIA_CLUSTER, ApportionElastic("sia", sia.SIA_CLUSTER))
    assert list(records["jct"]) == pytest.approx(list(direct.records["jct"]))


def test_round_length_and_a_seed_sweep_of_the_search_baseline() -> None:
    ran = run(
        "simulate", "sia", "--policy", "ones_search", "--jobs", "2", "--seed", "0,1",
        "--round-seconds", "120", "--format", "json",
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    rows = json.loads(ran.stdout)
    assert [(r["policy"], r["seed"]) for r in rows] == [("ones_search", 0), ("ones_search", 1)]
    assert all(r["finished"] == 2 for r in rows)
    # 2 jobs of Saturn workload 1 arrive at 401 s and 528 s: the first decision is at 480 s
    jobs = sia.workload("saturn", 1)[:2]
    config = ElasticConfig(round_seconds=120.0)
    direct = simulate_elastic(
        jobs, sia.SIA_CLUSTER, ApportionElastic("sia", sia.SIA_CLUSTER), config
    )
    assert direct.records["first_start"].iloc[0] == 480.0


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["philly", "--policy", "sia"], "--policy sia: an elastic policy needs elastic jobs"),
        (["gavel", "--policy", "ones_search"], "--policy ones_search"),
        (["sia", "--policy", "sia,max_min_fairness"], "--policy: sia elastic and max_min"),
        (["sia", "--policy", "elastic_sia", "--mode", "leases"], "--mode: not an option"),
        (["sia", "--policy", "ones", "--preemption-seconds", "5"], "--preemption-seconds"),
        (["sia", "--policy", "sia", "-o", "bogus=1"], "-o: options.bogus"),
        (["sia", "--policy", "ones_search", "-o", "bogus=1"], "-o: ones_search takes no"),
        (["sia", "--policy", "sia", "--cluster", "v100=8"], "--cluster v100=8"),
        (["sia", "--policy", "sia", "--load", "0"], "--load"),
    ],
)
def test_what_an_elastic_run_cannot_honour_is_refused(args: list[str], named: str) -> None:
    ran = run("simulate", *args)
    assert ran.returncode == 2 and ran.stdout == ""
    assert named in ran.stderr and "Traceback" not in ran.stderr
    assert len(ran.stderr.strip().splitlines()) == 1
