"""`solve simulate` told beliefs apart from the truth: `--remaining-noise` (deadline admission
told remaining times with a seeded lognormal error, the margin derived from it) and
`--known-start` (Sia's policy told a new job's single-GPU throughputs before it runs), each run
as the real command, and their bad values refused with exit 2 naming the flag."""

from __future__ import annotations

import json
from pathlib import Path
from statistics import NormalDist
from typing import Any

import pandas as pd
import pytest

from apportion.refdata import sia
from apportion.refdata.sia import application
from apportion.simulator.elastic.engine import simulate_elastic
from apportion.simulator.elastic.jobs import ElasticJob
from apportion.simulator.elastic.policies import ApportionElastic
from apportion.simulator.remaining_belief import RemainingBelief
from tests.cli.command import run

#: Hand-solved (the lease-mode test of `simulator.remaining_belief`, as a Chronus CSV): one
#: 8-GPU node, 600-s leases; `a` needs 1,000 s (two leases), `b` 300 s (one), both strict by
#: 1,200 s (20 minutes): the two leases before the deadline hold one of them, never both.
TWO_JOBS = """job_id,user,num_gpu,submit_time,model_name,duration,expect_time_list,\
expect_value_list,best_effort,job_type
0,vc,8,0,resnet50,16.666666666666668,20,10,0,strict
1,vc,8,0,resnet50,5,20,10,0,strict
"""
#: A noise seed that tells `a` it needs about half its 1,000 s (checked below, not assumed).
SEED = "2"
LEASES = ["--cluster", "gpu=8", "--gpus-per-node", "8", "--lease-seconds", "600"]


def simulate(trace: Path, *flags: str) -> dict[str, Any]:
    ran = run(
        "simulate", "chronus", str(trace), "--policy", "deadline_admission", *LEASES,
        "--format", "json", "--no-progress", *flags,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    (row,) = json.loads(ran.stdout)
    return dict(row)


def test_remaining_noise_breaks_a_bare_promise_and_the_derived_margin_keeps_it(
    tmp_path: Path,
) -> None:
    trace = tmp_path / "two.csv"
    trace.write_text(TWO_JOBS)
    belief = RemainingBelief(None, 0.3, int(SEED))  # type: ignore[arg-type]
    assert belief.z("job-0") < -1.8 and abs(belief.z("job-1")) < 1.0  # a looks like one lease
    oracle = simulate(trace)
    noisy = ["--remaining-noise", "0.3", "--seed", SEED]
    bare = simulate(trace, *noisy, "--remaining-margin", "none")
    kept = simulate(trace, *noisy)
    # Told the truth: one job guaranteed, none broken, and no belief reported.
    assert oracle["guarantees_broken"] == 0 and "remaining_time_noise" not in oracle
    # Told a's 1,000 s are about 550, the bare belief promises both: one promise breaks.
    assert bare["remaining_time_noise"] == 0.3 and bare["remaining_time_margin"] == 0.0
    assert bare["guarantees_broken"] >= 1
    # The margin derived from σ (e^(σ q₀.₉₉₉) − 1): no broken promise, the oracle's score.
    margin = kept["remaining_time_margin"]
    assert margin == pytest.approx(2.718281828459045 ** (0.3 * NormalDist().inv_cdf(0.999)) - 1)
    assert kept["guarantees_broken"] == 0 == kept["guaranteed_missed"]
    assert kept["satisfaction"] == oracle["satisfaction"]
    # A lower level sends a smaller margin, as its quantile says.
    lower = simulate(trace, *noisy, "--remaining-level", "0.9")
    expected = 2.718281828459045 ** (0.3 * NormalDist().inv_cdf(0.9)) - 1
    assert lower["remaining_time_margin"] == pytest.approx(expected)


def test_known_start_is_the_elastic_simulation_with_a_new_jobs_rates_known(
    tmp_path: Path,
) -> None:
    records = {}
    for flags in ([], ["--known-start"]):
        out = tmp_path / f"records{len(flags)}.csv"
        ran = run(
            "simulate", "sia", "--policy", "sia", "--jobs", "3", "--format", "json",
            "--output", str(out), *flags,
        )  # fmt: skip
        assert ran.returncode == 0, ran.stderr
        records[bool(flags)] = pd.read_csv(out)
    # The flag runs what the simulator runs with `known_start` (and the default what it runs
    # without), and the two differ on these jobs.
    jobs = sia.workload("saturn", 1)[:3]
    for known in (False, True):
        decider = ApportionElastic("sia", sia.SIA_CLUSTER, known_start=known)
        direct = simulate_elastic(jobs, sia.SIA_CLUSTER, decider)
        assert list(records[known]["jct"]) == pytest.approx(list(direct.records["jct"]))
    assert list(records[True]["jct"]) != list(records[False]["jct"])
    # Its definition: a job that has not run is worth its single-GPU rate per type, so alone
    # it first runs on one GPU of its fastest type (the largest one-GPU micro-batch over the
    # slowest one-GPU step, as Sia's simulator reads the profile).
    app = application(jobs[0].application)
    rate = {}
    for gpu, profile in app.profiles.items():
        rows = [(b, t) for r, b, t in zip(profile.replicas, profile.local_batch,
                profile.step_time, strict=True) if r == 1]  # fmt: skip
        rate[gpu] = max(b for b, _ in rows) / max(t for _, t in rows)
    decider = ApportionElastic("sia", sia.SIA_CLUSTER, known_start=True)
    placed = decider.decide(0.0, [ElasticJob("new", app, arrival=0.0)])["new"]
    assert sum(placed.values()) == 1
    assert {node.rsplit("-", 1)[0] for node in placed} == {max(rate, key=rate.__getitem__)}


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["chronus", "--policy", "deadline_admission", "--remaining-noise", "x"],
         "--remaining-noise: 'x' is not a number"),
        (["chronus", "--policy", "deadline_admission", "--remaining-noise", "-1"],
         "--remaining-noise -1: must be a number ≥ 0"),
        (["chronus", "--policy", "deadline_admission", "--remaining-noise", "0.3",
          "--remaining-level", "1"], "--remaining-level 1: must be at least 0.5"),
        (["chronus", "--policy", "deadline_admission", "--remaining-margin", "none"],
         "--remaining-margin: needs --remaining-noise"),
        (["chronus", "--policy", "deadline_admission", "--remaining-noise", "0.3",
          "--remaining-margin", "none", "--remaining-level", "0.9"], "--remaining-level:"),
        (["gavel", "--policy", "max_min_fairness", "--remaining-noise", "0.3"],
         "--remaining-noise: remaining times are believed apart from the truth in leases"),
        (["chronus", "--policy", "edf", "--mode", "leases", "--remaining-noise", "0.3"],
         "--remaining-noise: baseline 'edf'"),
        (["sia", "--policy", "sia", "--remaining-noise", "0.3"], "--remaining-noise: not an"),
        (["sia", "--policy", "ones_search", "--known-start"], "--known-start: ones_search"),
        (["chronus", "--policy", "deadline_admission", "--known-start"],
         "--known-start: an option of elastic policies only"),
    ],
)  # fmt: skip
def test_bad_belief_flags_exit_2_with_one_line_naming_the_flag(args: list[str], named: str) -> None:
    ran = run("simulate", *args)
    assert ran.returncode == 2 and ran.stdout == ""
    assert named in ran.stderr and "Traceback" not in ran.stderr
    assert len(ran.stderr.strip().splitlines()) == 1
