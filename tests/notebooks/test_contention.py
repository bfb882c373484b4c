"""notebooks/contention.ipynb in a real kernel at its small size: every plot is drawn, and the
numbers it quotes say what its text says. In one world (jobs span nodes as profiled, baselines
placed as DeepShare's and contending), the schedule objective at the tuned W1 beats the better
of SRTF and LAS on average JCT by 15 % or more and FIFO too, and at every W1 of the sweep, for
both objectives, neither SRTF nor LAS does as well on both average JCT and utilization; the
baselines now contend; DeepShare's own JCT (run time) leaves queueing out; the per-call limit is
reported; the windows world's per-window ratios are drawn and pooled as the bench pools them."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from apportion.simulator.config import CALL_TIME_LIMIT
from bench.windows import CONTENTION_LEVELS, CONTENTION_W1
from tests.notebooks.kernel import code_cells, execute, images
from tests.notebooks.kernel import quoted as read_quoted

BASELINES = ("FIFO", "SRTF", "LAS", "FIFO packed", "SRTF packed", "LAS packed")


@pytest.fixture(scope="module")
def notebook() -> Any:
    return execute("contention.ipynb")


@pytest.fixture(scope="module")
def quoted(notebook: Any) -> dict[str, Any]:
    return read_quoted(notebook)


@pytest.fixture(scope="module")
def real(quoted: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = quoted["traces"]["real"]
    return entry


def test_every_plotting_cell_shows_its_figure(notebook: Any) -> None:
    plotting = [cell for cell in code_cells(notebook) if "plt.show()" in cell.source]
    # the W1 trade-off curves; the JCT CDF and slowdown; the ratios per window
    assert len(plotting) == 3
    assert [images(cell) for cell in plotting] == [1, 1, 1]


def test_it_ran_at_the_small_size(quoted: dict[str, Any]) -> None:
    assert quoted["size"] == "small"
    assert list(quoted["traces"]) == ["real"]
    assert quoted["tuned_w1"] == CONTENTION_W1 and quoted["levels"] == CONTENTION_LEVELS
    assert quoted["tuned_w1"] in quoted["w1"] and 0.0 in quoted["w1"]
    assert quoted["call_time_limit"] == CALL_TIME_LIMIT


def test_the_schedule_beats_srtf_and_las_and_fifo_on_average_jct(
    real: dict[str, Any], quoted: dict[str, Any]
) -> None:
    # DeepShare's claim, "average JCT ≤ 0.85 × the better of SRTF and LAS"; and below
    # non-preemptive FIFO's. The 0.85 × against FIFO too is a full-size claim: 24 jobs queued at
    # t = 0 are one batch, which FIFO runs nearly as well (within 7 % here). So is the tail: with
    # 24 jobs the p99 is the last job, which every policy finishes near the end.
    policies = real["policies"]
    mine = policies[f"schedule W1={quoted['tuned_w1']:g}"]["jct_mean_h"]
    assert mine <= 0.85 * min(policies[b]["jct_mean_h"] for b in ("SRTF", "LAS"))
    assert real["vs_plain"]["mean"] < 1.0
    assert real["deepshare_model_vs_plain"]["mean"] < 1.0


def test_no_srtf_or_las_dominates_any_w1_of_either_objective(
    real: dict[str, Any], quoted: dict[str, Any]
) -> None:
    """SRTF and LAS (DeepShare's baselines), placed either way, beat no point of the sweep on
    both average JCT and utilization. FIFO may: 24 jobs queued at t = 0 are one batch, and at
    this size FIFO packed does as well as the schedule on both at some W1."""
    swept = real["dominated_by"]
    assert {f"schedule W1={w:g}" for w in quoted["w1"]} <= set(swept)
    assert {f"reference W1={w:g}" for w in quoted["w1"] if w > 0} <= set(swept)
    assert all(set(found) <= {"FIFO", "FIFO packed"} for found in swept.values())


def test_the_dominated_points_are_the_ones_the_numbers_show(real: dict[str, Any]) -> None:
    """Recomputed from the quoted figures: a baseline dominates a point when it is no worse on
    both figures and better on one (lower JCT, higher utilization)."""
    policies = real["policies"]

    def better(b: str, p: str, columns: tuple[tuple[str, int], ...]) -> bool:
        gains = [sign * (policies[b][c] - policies[p][c]) for c, sign in columns]
        return bool(min(gains) >= 0 and max(gains) > 0)

    for key, columns in (
        ("dominated_by", (("jct_mean_h", -1), ("utilization_%", 1))),
        ("dominated_on_jct_by", (("jct_mean_h", -1), ("jct_p99_h", -1))),
    ):
        for point, found in real[key].items():
            assert found == [b for b in BASELINES if better(b, point, columns)], (key, point)


def test_the_baselines_contend_in_the_same_world(real: dict[str, Any]) -> None:
    """Placed under the rules, SRTF and LAS spread and suffer contention: their jobs hold GPUs
    longer than alone, and longer than under the schedule at the recommended W1."""
    policies = real["policies"]
    mine = policies[f"schedule W1={CONTENTION_W1:g}"]
    for baseline in BASELINES:
        assert policies[baseline]["slowdown"] > 1.2
        assert policies[baseline]["slowdown"] > mine["slowdown"]


def test_deepshares_jct_leaves_queueing_out(real: dict[str, Any]) -> None:
    for numbers in real["policies"].values():
        assert 0 < numbers["run_time_h"] < numbers["jct_mean_h"]


def test_the_windows_are_the_benchs_pooled_as_it_pools_them(quoted: dict[str, Any]) -> None:
    """At the small size: `real` on 32 GPUs, the bench's 3 windows of 24 jobs; the quoted
    pooled ratios are the bench table's (its mean over windows ÷ the best baseline's mean),
    recomputed here from that table."""
    from bench import windows

    windows_quote = quoted["windows"]
    assert (windows_quote["count"], windows_quote["jobs"]) == (windows.COUNT, 24)
    [cell] = windows_quote["cells"]
    assert (cell["trace"], cell["gpus"]) == ("real", 32)
    world = windows.WORLDS["contention"]()
    world = replace(
        world,
        traces={"deepshare_real": world.traces["deepshare_real"]},
        sizes={"deepshare_real": (32,)},
    )
    table = windows.summarize(windows.measure(world), world).set_index("policy")
    best = table.loc[list(world.plain), "jct_h"].min()
    assert cell["mean"] == pytest.approx(
        table.loc["contention_placement", "jct_h"] / best, abs=1e-3
    )
    # A window's best baseline is at most the pooled best's there, so some window's ratio is at
    # least the pooled one.
    for stat in ("mean", "p99"):
        assert cell[f"{stat}_worst_window"] >= cell[stat] - 1e-3
        assert 0 <= cell[f"{stat}_windows_met"] <= windows_quote["count"]
