"""The elastic windows world: its second cluster is Sia's node layout halved as stated, its
runs come window by window, and its rows reach the CSV file as they end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from apportion.refdata import sia
from apportion.simulator.windows import draw_windows
from bench.windows import WINDOW_SEED
from bench.windows_elastic import CLUSTERS, POLICIES, append_row, elastic_world, halved, tasks_of


def test_the_second_size_is_sias_nodes_halved_rounded_up() -> None:
    # Sia's cluster: 6 × 4 T4, 2 × 8 A100, 3 × 8 RTX 2080Ti; halved up: 3, 1, 2 nodes.
    half = CLUSTERS[36]
    assert half.nodes == {"t4": 3, "a100": 1, "rtx2080ti": 2}
    assert half.gpus == {"t4": 12, "a100": 8, "rtx2080ti": 16}
    assert half.gpus_per_node == sia.SIA_CLUSTER.gpus_per_node
    assert half.max_nodes == sia.SIA_CLUSTER.max_nodes
    assert CLUSTERS[64] == sia.SIA_CLUSTER
    assert list(CLUSTERS) == [36, 64]


def test_halving_keeps_at_least_half_of_every_type_and_a_node() -> None:
    for counts in ({"a": 1, "b": 4, "c": 7}, {"a": 2, "b": 9, "c": 10}):
        spec = sia.ClusterSpec(counts, dict.fromkeys(counts, 8), dict.fromkeys(counts, 3))
        half = halved(spec)
        for gpu, n in counts.items():
            assert 2 * half.nodes[gpu] in (n, n + 1)
            assert half.nodes[gpu] >= 1


def test_runs_come_size_by_size_then_window_by_window_on_the_seeds_windows() -> None:
    world = elastic_world()
    tasks, labels = tasks_of(world, full=True)
    per_window = 2 * len(POLICIES)  # two workloads
    count = len(tasks) // (per_window * len(CLUSTERS))
    order = [(lab["gpus"] != 36, lab["window"]) for lab in labels]
    assert order == sorted(order)  # the halved cluster first, each size's windows in turn
    assert len(tasks) == len(labels) == per_window * len(CLUSTERS) * count
    saturn = [j.time for j in sia.workload("saturn", 1)]
    expected = draw_windows(saturn, count, WINDOW_SEED, jobs=20)
    for gpus in CLUSTERS:
        mine = [
            t[3]
            for t, lab in zip(tasks, labels, strict=True)
            if lab["trace"] == "sia_saturn1" and lab["gpus"] == gpus == t[2]
        ]
        assert mine[:: len(POLICIES)] == expected
    first = labels[:per_window]
    assert {(lab["trace"], lab["gpus"], lab["policy"]) for lab in first} == {
        (t, 36, p) for t in ("sia_saturn1", "sia_philly1") for p in POLICIES
    }
    assert all(lab["jobs"] == 20 for lab in labels)


def test_rows_are_appended_under_one_header(tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    append_row(str(path), {"trace": "t", "window": 0, "jct_h": 0.5})
    append_row(str(path), {"trace": "t", "window": 1, "jct_h": 1.25})
    back = pd.read_csv(path)
    assert list(back.columns) == ["trace", "window", "jct_h"]
    assert np.allclose(back["jct_h"], [0.5, 1.25])
    assert list(back["window"]) == [0, 1]
