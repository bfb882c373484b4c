"""Shared fixtures: the bundled snapshot files; property tests run the same examples every time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# Property tests draw the same examples on every run, so a suite that passed once passes on a
# fresh clone too (randomly drawn examples made a rare first-order-solver miss show up as a
# flaky failure). Explore new examples locally with --hypothesis-seed or another profile.
settings.register_profile("repeatable", derandomize=True, database=None)
settings.load_profile("repeatable")

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def load_fixture(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / name).read_text())


@pytest.fixture
def gavel_physical() -> dict[str, Any]:
    return load_fixture("gavel_physical_96.json")


# Markers (registered in pyproject.toml): what a test needs beyond this process, and `slow`.
# Every test needing a service, a browser, a notebook kernel or a live Slurm or Ray cluster is
# slow too, so `pytest -m "not slow"` is the quick subset a contributor runs while CI runs all.
TESTS = Path(__file__).resolve().parent
NEEDS = ("service", "slurm", "ray", "browser", "notebook")
#: Folders and files whose every test needs something (paths relative to tests/).
MARKED_PATHS: dict[str, tuple[str, ...]] = {
    "notebooks/": ("notebook",),
    "api/test_web.py": ("browser",),
    "api/test_docs_page.py": ("browser",),
    "test_readme.py": ("service",),
    "adapters/slurm/test_live_local.py": ("slurm",),  # a cluster of its own
}
#: Tests that take seconds on two cores (a long solve, a full replay, a subprocess per case),
#: by file, or file::test for every parameter of one test.
SLOW_PATHS: tuple[str, ...] = (
    "test_markers.py",
    "test_architecture.py::test_every_fixture_is_a_snapshot_that_solves",
    "test_architecture.py::test_a_max_min_run_imports_nothing_heavy",
    "cli/test_robustness.py",
    "cli/test_simulate_elastic.py",
    "conformance/test_conformance.py",
    "formulations/fairness/test_fleet.py",
    "formulations/objectives/test_finish_time_fairness.py::test_jobs_far_past_their_isolated_finish_have_rho_near_1e3",
    "formulations/objectives/test_finish_time_fairness.py::test_equals_bisection_over_feasibility_lps",
    "formulations/objectives/test_finish_time_fairness.py::test_large_rho_converges_to_the_exact_optimum",
    "formulations/objectives/test_makespan.py::test_jobs_needing_tiny_time_fractions_finish",
    "formulations/deadlines/test_replay.py",
    "formulations/placement/test_rules.py::test_time_limit_returns_the_best_placement_and_says_how_good",
    "formulations/placement/test_reference.py::test_under_a_time_limit_the_answer_is_optimal_only_with_a_proof",
    "formulations/elastic/test_search.py::test_a_milp_stopped_before_its_start_leaves_the_rounded_answer_feasible",
    "adapters/slurm/test_tryout.py::test_the_tryout_runs_rounds_on_its_own_cluster_and_stops_everything",
    "api/test_backends.py::test_solve_with_cvxpy_and_a_sub_solver",
    "api/test_limits.py::test_large_bodies_travel_through_spool_files_and_leave_none_behind",
    "conformance/test_agreement.py",
    "mechanism/test_convergence.py",
    "simulator/test_against_gavel.py",
    "simulator/elastic/test_ones.py",
    "simulator/elastic/test_engine.py::test_every_job_finishes_within_the_nodes",
    "simulator/elastic/test_engine.py::test_time_shares_are_enacted_by_deficit",
    "simulator/test_sweep.py",
    "simulator/test_progress.py",
    "simulator/test_cli.py::test_several_policies_make_a_sweep_with_a_table",
    "simulator/traces/test_deepshare.py::test_trace0_has_256_jobs_queued_at_time_zero_in_key_order",
    "simulator/traces/test_poisson.py::test_single_gpu_and_short_only_variants",
    "simulator/traces/test_chronus.py::test_first_keeps_the_earliest_jobs_and_only_they_must_fit_the_cluster",
    "solver/backends/test_blocks.py::test_max_min_lps_agree_with_highs",
    "solver/backends/test_blocks.py::test_pareto_lps_agree_with_highs",
    "solver/backends/test_blocks.py::test_level_lps_agree_with_highs",
    "solver/snapshot/test_deadlines.py::test_http_answers_422_naming_the_field",
    "solver/snapshot/test_columns.py::test_fast_and_full_paths_accept_and_refuse_the_same_jobs",
)


def _needs(item: pytest.Item) -> set[str]:
    """What `item` needs: by its path, by a live Slurm cluster among its fixtures, by a service
    started from `tests/api/service.py` in its module."""
    where = item.path.relative_to(TESTS).as_posix()
    needs = {m for path, marks in MARKED_PATHS.items() if where.startswith(path) for m in marks}
    if "slurm_cluster" in getattr(item, "fixturenames", ()):
        needs.add("slurm")
    if "ray_cluster" in getattr(item, "fixturenames", ()):
        needs.add("ray")
    module = getattr(item, "module", None)
    if module is not None and any(
        getattr(value, "__module__", None) == "tests.api.service" for value in vars(module).values()
    ):
        needs.add("service")
    return needs


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        where = item.path.relative_to(TESTS).as_posix()
        name = f"{where}::{item.name.partition('[')[0]}"
        needs = _needs(item)
        for mark in sorted(needs):
            item.add_marker(getattr(pytest.mark, mark))
        if needs or any(name == p or where == p for p in SLOW_PATHS):
            item.add_marker(pytest.mark.slow)
