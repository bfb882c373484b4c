"""The Gavel world of the windows bench: its clusters, traces, rules and runs, and its fairness
table worked out by hand."""

from __future__ import annotations

import pandas as pd
import pytest

import bench.windows as windows
from apportion.refdata.gavel import read_trace
from apportion.simulator.engine import simulate
from apportion.simulator.windows import windowed
from bench.windows_gavel import (
    GAVEL_RULES,
    LENGTHS,
    PLAIN,
    SIZES,
    TRACES,
    fairness,
    gavel_world,
    measure,
    spec,
)


def test_the_world_is_gavels_cluster_and_a_contended_third_of_it() -> None:
    world = windows.WORLDS["gavel"]()
    assert world.name == "gavel" and world.score == "jct_h" and not world.higher
    assert set(world.plain) == {"fifo", "max_min_agnostic", "srtf"}
    for trace in TRACES:
        assert world.sizes[trace] == (36, 108)
        for gpus, each in ((36, 12), (108, 36)):
            cluster = world.traces[trace](gpus).load_trace().cluster
            assert cluster.gpu_counts == {"v100": each, "p100": each, "k80": each}
            assert all(node.gpus == 1 for node in cluster.nodes)  # Gavel's 1-GPU servers


def test_every_policy_runs_under_gavels_rounds() -> None:
    world = gavel_world()
    assert world.policies["max_min_fairness"].policy == "max_min_fairness"
    assert world.policies["fifo"].policy == "fifo_baseline"
    for config in world.policies.values():
        assert config.round_seconds == 360.0
        assert config.round_rule == "gavel"
        assert str(config.resolve) == str(GAVEL_RULES.resolve)


def test_an_unequal_split_is_refused_naming_the_field() -> None:
    with pytest.raises(ValueError, match="gpus: 40"):
        spec("gavel_max_min", 40)


@pytest.mark.parametrize(("trace", "count"), [("gavel_max_min", 96), ("gavel_makespan", 100)])
def test_the_traces_load_with_every_job_of_the_file(trace: str, count: int) -> None:
    rows = read_trace(TRACES[trace])
    jobs = spec(trace, 36).load_trace().jobs
    assert len(rows) == len(jobs) == count
    assert [j.total_steps for j in jobs] == [r["total_steps"] for r in rows]
    assert [j.scale_factor for j in jobs] == [r["scale_factor"] for r in rows]


def test_the_runs_are_every_trace_size_window_and_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(windows, "COUNT", 2)
    monkeypatch.setattr(windows, "FULL", False)
    world = gavel_world()
    runs, labels = windows.runs_of(world)
    assert len(runs) == len(labels) == len(TRACES) * len(SIZES) * 2 * len(world.policies)
    assert {lab["jobs"] for lab in labels} == {LENGTHS[0]}
    assert {(lab["trace"], lab["gpus"]) for lab in labels} == {
        (t, g) for t in TRACES for g in SIZES
    }
    for run, label in zip(runs, labels, strict=True):
        assert len(run.trace.load_trace().jobs) == LENGTHS[0]
        assert run.config == world.policies[label["policy"]]


def test_a_small_window_finishes_every_job_no_sooner_than_alone_on_its_fastest_type() -> None:
    # Lower bound from the trace alone: a job needs total_steps ÷ its fastest throughput.
    full = spec("gavel_makespan", 36)
    window = windows.windows_of([0.0] * 100, 6)[0]
    trace = windowed(full, window).load_trace()
    alone = max(j.total_steps / max(j.throughput.values()) for j in trace.jobs)
    for label in ("max_min_fairness", "fifo", "srtf"):
        figures = measure(simulate(trace, gavel_world().policies[label]))
        assert figures["unfinished"] == 0
        assert figures["jct_max_h"] * 3600 >= alone * (1 - 1e-9)
        assert figures["jct_max_h"] >= figures["jct_p99_h"] >= figures["jct_h"] > 0


def test_the_fairness_table_compares_the_worst_job_with_the_best_plain_baseline() -> None:
    # Window 0 and 1 per policy: the worst job's JCT (h) and FTF ρ.
    runs = {
        "max_min_fairness": [(4.0, 1.0), (6.0, 1.2)],
        "fifo": [(5.0, 3.0), (9.0, 2.0)],
        "max_min_agnostic": [(6.0, 1.5), (6.0, 1.5)],
        "srtf": [(8.0, 2.0), (8.0, 2.0)],
    }
    frame = pd.DataFrame(
        [
            {"trace": "t", "gpus": 36, "window": w, "policy": p, "jct_max_h": j}
            | {"ftf_rho_max": r, "ftf_rho_mean": 1.0, "makespan_h": j}
            for p, pairs in runs.items()
            for w, (j, r) in enumerate(pairs)
        ]
    )
    table = fairness(frame).set_index("policy")
    assert set(PLAIN) <= set(table.index)
    # Pooled worst JCT: ours 5.0; plain 7.0 (FIFO), 6.0 (agnostic), 8.0 (SRTF) → 5 / 6.
    assert table.loc["max_min_fairness", "jct_max_h_vs_plain"] == pytest.approx(5.0 / 6.0)
    # Pooled worst ρ: ours 1.1; best plain 1.5 (agnostic).
    assert table.loc["max_min_fairness", "ftf_rho_max_vs_plain"] == pytest.approx(1.1 / 1.5)
    assert table.loc["fifo", "ftf_rho_max"] == pytest.approx(2.5)
