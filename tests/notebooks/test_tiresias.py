"""notebooks/tiresias.ipynb in a real kernel at its small size: every plot is drawn, and the
numbers it quotes say what its text says: event-driven decisions remove the half round of
waiting a round grid adds on Tiresias's 60-job trace; on the Philly sample every run finishes
every job, YARN-CS never preempts, 2D-LAS cuts the waiting and the average JCT against YARN-CS,
and exact admission preempts less than Tiresias's greedy admission at no worse average JCT. On
the bench's random windows of Tiresias's trace, the quoted pooled and worst-window ratios follow
from the quoted per-window JCTs, every job finishes, and 2D-LAS and 2D-Gittins beat YARN-CS."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.notebooks.kernel import code_cells, execute, images
from tests.notebooks.kernel import quoted as read_quoted


@pytest.fixture(scope="module")
def notebook() -> Any:
    return execute("tiresias.ipynb")


@pytest.fixture(scope="module")
def quoted(notebook: Any) -> dict[str, Any]:
    return read_quoted(notebook)


@pytest.fixture(scope="module")
def policies(quoted: dict[str, Any]) -> dict[str, dict[str, Any]]:
    table: dict[str, dict[str, Any]] = quoted["policies"]
    return table


def test_every_plotting_cell_shows_its_figure(notebook: Any) -> None:
    plotting = [cell for cell in code_cells(notebook) if "plt.show()" in cell.source]
    # The JCT CDF with the ratios to YARN-CS; JCT by gang size; the per-window ratios.
    assert len(plotting) == 3
    assert [images(cell) for cell in plotting] == [1, 1, 1]


def test_it_ran_at_the_small_size(quoted: dict[str, Any], policies: dict[str, Any]) -> None:
    assert quoted["size"] == "small"
    assert quoted["jobs"] == 160
    assert set(policies) == {
        "YARN-CS",
        "2D-LAS",
        "2D-Gittins",
        "2D-LAS exact",
        "2D-Gittins exact",
    }


def test_event_driven_decisions_remove_the_rounds_wait(quoted: dict[str, Any]) -> None:
    rounds, events = quoted["event_driven"]["360 s rounds"], quoted["event_driven"]["event-driven"]
    assert events["queueing_delay_mean_s"] == 0.0  # on this trace no job has to wait
    assert rounds["queueing_delay_mean_s"] > 0.0
    assert events["jct_mean_s"] == pytest.approx(
        rounds["jct_mean_s"] - rounds["queueing_delay_mean_s"], rel=0.01
    )


def test_every_run_finishes_and_yarn_never_preempts(policies: dict[str, Any]) -> None:
    for row in policies.values():
        assert row["unfinished"] == 0
        assert "error" not in row["calls"]
    assert policies["YARN-CS"]["preemptions"] == 0


def test_2d_las_waits_less_and_finishes_sooner_than_yarn(
    policies: dict[str, Any], quoted: dict[str, Any]
) -> None:
    las, yarn = policies["2D-LAS"], policies["YARN-CS"]
    assert las["wait_mean_h"] < yarn["wait_mean_h"]
    assert las["jct_mean_h"] < yarn["jct_mean_h"]
    assert quoted["las_vs_yarn_mean"] == pytest.approx(yarn["jct_mean_h"] / las["jct_mean_h"])


def test_exact_admission_preempts_less_at_no_worse_jct(policies: dict[str, Any]) -> None:
    for name in ("2D-LAS", "2D-Gittins"):
        greedy, exact = policies[name], policies[f"{name} exact"]
        assert exact["preemptions"] < greedy["preemptions"]
        assert exact["jct_mean_h"] <= greedy["jct_mean_h"]


PLAIN = ("yarn_cs", "fifo", "srtf")
OURS = ("2d_las", "2d_gittins")


@pytest.fixture(scope="module")
def windows(quoted: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = quoted["windows"]
    return found


def test_the_windows_are_the_bench_s_small_ones(windows: dict[str, Any]) -> None:
    assert windows["count"] == 3
    assert windows["jobs"] == {"tiresias60": 20}
    assert set(windows["settings"]) == {"tiresias60 8"}
    for setting in windows["settings"].values():
        assert set(setting["jct_h_per_window"]) == {*PLAIN, *OURS}
        assert all(len(v) == 3 for v in setting["jct_h_per_window"].values())


def test_the_ratios_follow_from_the_per_window_jcts(windows: dict[str, Any]) -> None:
    for setting in windows["settings"].values():
        jct = {p: np.array(v) for p, v in setting["jct_h_per_window"].items()}
        best_each = np.min([jct[p] for p in PLAIN], axis=0)
        best_pooled = min(jct[p].mean() for p in PLAIN)
        assert setting["best_plain"] == min(PLAIN, key=lambda p: jct[p].mean())
        for policy, row in setting["pooled"].items():
            assert row["jct_h"] == pytest.approx(jct[policy].mean())
            assert row["pooled_vs_plain"] == pytest.approx(jct[policy].mean() / best_pooled)
            assert row["worst_vs_plain"] == pytest.approx((jct[policy] / best_each).max())
            assert row["vs_yarn"] == pytest.approx(jct[policy].mean() / jct["yarn_cs"].mean())
            assert row["beats_yarn"] == int((jct[policy] < jct["yarn_cs"]).sum())


def test_on_windows_every_job_finishes_and_the_2d_policies_beat_yarn(
    windows: dict[str, Any],
) -> None:
    for setting in windows["settings"].values():
        assert all(row["unfinished"] == 0 for row in setting["pooled"].values())
        for policy in OURS:
            assert setting["pooled"][policy]["vs_yarn"] < 1.0
