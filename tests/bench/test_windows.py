"""The windows bench's table: pooled figures and the worst window against the best plain
baseline of each window, worked out by hand on a made-up frame."""

from __future__ import annotations

import pandas as pd
import pytest

from bench.windows import _contention as contention_world
from bench.windows import _deadlines as deadline_world
from bench.windows import summarize


def frame(rows: list[tuple[int, str, float]], column: str) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"trace": "t", "gpus": 8, "window": w, "policy": p, column: v, "unfinished": 0}
            for w, p, v in rows
        ]
    )


def test_the_worst_jct_window_is_the_largest_ratio_to_that_windows_best_baseline() -> None:
    # Window 0: best plain is SRTF (2.0), ours 3.0 → 1.5; window 1: best is LAS (4.0), ours 2.0
    # → 0.5. FIFO is plain too: in window 0 it (2.5) is not the best.
    rows = [
        (0, "contention_placement", 3.0), (0, "fifo", 2.5), (0, "srtf", 2.0), (0, "las", 6.0),
        (1, "contention_placement", 2.0), (1, "fifo", 5.0), (1, "srtf", 8.0), (1, "las", 4.0),
    ]  # fmt: skip
    data = frame(rows, "jct_h").assign(jct_p99_h=1.0)
    table = summarize(data, contention_world()).set_index("policy")
    assert table.loc["contention_placement", "jct_h"] == pytest.approx(2.5)
    assert table.loc["contention_placement", "worst_vs_plain"] == pytest.approx(1.5)
    assert table.loc["fifo", "worst_vs_plain"] == pytest.approx(1.25)
    assert table.loc["las", "worst_vs_plain"] == pytest.approx(3.0)
    assert table.loc["srtf", "windows"] == 2
    # Pooled: ours 2.5 against the best pooled baseline, FIFO's 3.75 (SRTF 5.0, LAS 5.0).
    assert table.loc["contention_placement", "pooled_vs_plain"] == pytest.approx(2.5 / 3.75)


def test_the_worst_satisfaction_window_is_the_smallest_ratio() -> None:
    rows = [
        (0, "deadline_admission", 0.9), (0, "chronus_one_by_one", 0.95), (0, "edf", 0.8),
        (0, "srtf", 0.5), (0, "fifo", 0.6),
        (1, "deadline_admission", 1.0), (1, "chronus_one_by_one", 0.5), (1, "edf", 0.8),
        (1, "srtf", 0.4), (1, "fifo", 0.2),
    ]  # fmt: skip
    be = {"deadline_admission": 3.0, "srtf": 2.0}
    data = frame(rows, "satisfaction").assign(first_met=1.0, broken=0)
    data["be_jct_h"] = data["policy"].map(be).fillna(1.0)
    table = summarize(data, deadline_world()).set_index("policy")
    assert table.loc["deadline_admission", "satisfaction"] == pytest.approx(0.95)
    assert table.loc["deadline_admission", "worst_vs_plain"] == pytest.approx(0.9 / 0.95)
    assert table.loc["deadline_admission", "be_vs_srtf"] == pytest.approx(1.5)
    assert table.loc["srtf", "worst_vs_plain"] == pytest.approx(0.4 / 0.8)
