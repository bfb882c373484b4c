"""`export_model` / `solve --export`: the exact model a policy would solve, with names an
operator can read, in files other solvers can read back."""

from __future__ import annotations

from pathlib import Path

import highspy
import numpy as np
import pytest

from apportion.solver import InputError, solve
from apportion.solver.backends.names import portable_name, portable_names
from apportion.solver.context import SolveContext
from apportion.solver.model import Model, Sense
from apportion.solver.options import SolveOptions
from apportion.solver.pipeline import export_model
from apportion.solver.registry import all_policies
from apportion.solver.status import Status
from tests.conformance.case import all_cases
from tests.conformance.cases_max_min import TWO_BY_TWO


def _read_back(path: Path) -> highspy.Highs:
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    assert h.readModel(str(path)) == highspy.HighsStatus.kOk
    h.run()
    return h


@pytest.mark.parametrize("suffix", [".lp", ".mps"])
def test_exported_model_is_the_solved_one(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"model{suffix}"
    written = export_model(TWO_BY_TWO, path)
    assert written is not None and path.exists()
    result = solve(TWO_BY_TWO)
    report = result.solver
    assert (written.variables, written.constraints, written.nonzeros) == (
        report.variables,
        report.constraints,
        report.nonzeros,
    )
    h = _read_back(path)
    # Max-min: the model's optimum t is the minimum normalized share, 1 (hand-solved case).
    assert h.getInfo().objective_function_value == pytest.approx(result.objective, rel=1e-9)
    names = set(h.getLp().col_names_) | set(h.getLp().row_names_)
    assert {"x(a,k80)", "x(b,v100)", "t", "share(a)", "time(b)", "capacity(v100)"} <= names


@pytest.mark.parametrize("policy", list(all_policies()))
def test_every_policy_exports_a_model(tmp_path: Path, policy: str) -> None:
    """Export goes through the one place every policy solves in, so each one writes a model
    (sequence policies their first) that HiGHS reads back and solves."""
    case = next((c for c in all_cases() if c.policy == policy), None)
    if case is None or all_policies()[policy].problem_class == "algorithm":
        pytest.skip(f"{policy}: no conformance case, or no model to export")
    path = tmp_path / "model.lp"
    written = export_model(case.snapshot, path, policy=policy, options=case.options)
    assert written is not None and written.variables > 0
    assert _read_back(path).getModelStatus() == highspy.HighsModelStatus.kOptimal


def test_ids_with_awkward_characters_stay_readable_and_unique(tmp_path: Path) -> None:
    snapshot = {
        "gpu_types": [{"name": "v100", "count": 2}],
        "jobs": [
            {"id": ids, "throughput": {"v100": 1.0 + k}}
            for k, ids in enumerate(["job-1", "job_1", "a b:c", "9lives"])
        ],
    }
    path = tmp_path / "m.lp"
    export_model(snapshot, path, options={"merge_identical": False})
    h = _read_back(path)
    cols = list(h.getLp().col_names_)
    # HiGHS falls back to c0, c1, ... for the whole model if one name is unusable.
    assert "c0" not in cols
    assert {"x(job_1,v100)", "x(job_1,v100)~2", "x(a_b_c,v100)", "x(9lives,v100)"} <= set(cols)
    assert h.getInfo().objective_function_value == pytest.approx(solve(snapshot).objective)


def test_export_of_a_milp_keeps_integrality(tmp_path: Path) -> None:
    # Knapsack: values (5, 4, 3), weights (2, 3, 1) ≤ 5. {a, b} weighs 5 and is worth 9 ({a, c}:
    # 8, {b, c}: 7, all three too heavy); the relaxation would take c, a and 2/3 of b: 10.67.
    m = Model("knapsack")
    v = m.add_variables("pick", 3, upper=1.0, integer=True, coords=(("item", list("abc")),))
    m.add_constraints("weight", {v: np.array([[2.0, 3.0, 1.0]])}, upper=5.0)
    m.set_objective({v: [5.0, 4.0, 3.0]}, Sense.MAXIMIZE)
    path = tmp_path / "k.mps"
    ctx = SolveContext(SolveOptions(), export_path=str(path))
    solution = ctx.solve(m)
    assert solution.status is Status.ERROR and ctx.exported is not None
    h = _read_back(path)
    assert h.getInfo().objective_function_value == pytest.approx(9.0)
    assert list(h.getLp().col_names_) == ["pick(a)", "pick(b)", "pick(c)"]
    assert ctx.solves == 0  # build-only: nothing was solved


def test_bad_suffix_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        export_model(TWO_BY_TWO, tmp_path / "model.txt")
    assert info.value.errors[0].loc == ("export",)


def test_nothing_to_export_when_no_job_can_run(tmp_path: Path) -> None:
    snapshot = {"gpu_types": [{"name": "v100", "count": 1}], "jobs": [{"id": "a"}]}
    assert export_model(snapshot, tmp_path / "m.lp") is None
    assert not (tmp_path / "m.lp").exists()


def test_portable_names() -> None:
    assert portable_name("x[job-3,v100]") == "x(job_3,v100)"
    assert portable_name("") == "_"
    assert portable_names(["a-1", "a_1", "a+1", "a_1~2"]) == ["a_1", "a_1~3", "a_1~4", "a_1~2"]
