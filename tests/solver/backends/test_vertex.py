"""The vertex methods of the blocks backend against HiGHS on contended, heterogeneous max-min
LPs: the market's prices then the crossover for the level LP (the default for its shape),
the interior point's early prices then the crossover for the Pareto LP (`solver="vertex"`).
Whatever is called optimal must agree with HiGHS's simplex and carry a certificate recomputed
here on the model (primal violation and relative gap within 1e-9). Besides plain contended
clusters: jobs pinned to one type, many identical jobs, two types alike (every job torn
between them), a single type."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from apportion.formulations.fairness.pareto import as_floors, floored, total_share_costs
from apportion.formulations.fairness.share_input import Entities, share_input
from apportion.formulations.fairness.share_lp import LevelState, ShareStructure, build_share_lp
from apportion.refdata.synthetic import contended_columns
from apportion.solver.arrays import ClusterArrays
from apportion.solver.backends import SolveSettings, get_backend
from apportion.solver.backends.base import LpMethod, Solution
from apportion.solver.backends.blocks import VERTEX, BlocksBackend, duals
from apportion.solver.backends.blocks.form import block_form, model_duals, model_point
from apportion.solver.backends.blocks.master import (
    TOLERANCES,
    affine,
    simplex_settings,
    solve_master,
)
from apportion.solver.backends.blocks.part import of_form
from apportion.solver.backends.blocks.vertex import DUAL_TOL, Answer, assemble, choose, violated
from apportion.solver.backends.certificate import certify
from apportion.solver.model import CompiledModel, Sense
from apportion.solver.snapshot import parse_snapshot
from apportion.solver.status import Status

GAP = 1e-9
SNAPSHOTS = 24


def structure(seed: int, kind: str = "plain") -> ShareStructure:
    rng = np.random.default_rng(seed)
    jobs, types = int(rng.integers(150, 400)), int(rng.integers(2, 9))
    snapshot = contended_columns(jobs, max(types, 3), seed=seed)
    _vary(snapshot, kind, rng)
    snap = parse_snapshot(snapshot)
    problem = ClusterArrays.from_snapshot(snap)
    entities = Entities.single(problem.num_jobs)
    prepared = share_input(snap, problem, problem.throughput, entities, merge=False)
    assert prepared.structure is not None
    return prepared.structure


def _vary(snapshot: dict[str, Any], kind: str, rng: np.random.Generator) -> None:
    """In place: a fifth of the jobs pinned to one type (`pinned`); a third of them copies of
    one job (`identical`); the second type a copy of the first, throughputs and GPUs (`tie`);
    the newest type alone (`single`)."""
    jobs, gpus = snapshot["jobs"], snapshot["gpu_types"]
    columns = jobs["throughput"]
    names = list(columns)
    n = len(jobs["id"])
    if kind == "pinned":
        pinned = np.flatnonzero(rng.random(n) < 0.2)
        keep = rng.integers(len(names), size=pinned.size)
        for k, name in enumerate(names):
            column = columns[name]
            column[pinned[keep != k]] = 0.0
            # Pinned to a type their gang does not fit on would leave them out of the LP.
            gpus[k]["count"] = max(gpus[k]["count"], 8)
    elif kind == "identical":
        copies = np.flatnonzero(rng.random(n) < 0.33)
        for name in names:
            columns[name][copies] = columns[name][0]
        for field in ("scale_factor", "weight"):
            jobs[field][copies] = jobs[field][0]
    elif kind == "single":
        snapshot["gpu_types"] = gpus[-1:]
        jobs["throughput"] = {names[-1]: columns[names[-1]]}
    elif kind == "tie":
        columns[names[1]][:] = columns[names[0]]
        gpus[1]["count"] = gpus[0]["count"]


def state(s: ShareStructure) -> LevelState:
    return LevelState(
        s.weight.copy(), np.zeros(s.size), np.ones(1), np.ones(1, bool), np.zeros(s.size)
    )


def level_model(s: ShareStructure) -> CompiledModel:
    return build_share_lp(s, state(s), single=True)[0].compile()


def pareto_model(s: ShareStructure, level: float) -> CompiledModel:
    model, b = build_share_lp(s, as_floors(s, floored(state(s), level)), True, "pareto")
    costs = total_share_costs(b.value, s.groups.count)
    model.set_objective({b.x.block: costs, b.t: -1.0}, Sense.MAXIMIZE)
    return model.compile()


def agrees(model: CompiledModel, solver: str | None = VERTEX) -> Solution:
    ours = BlocksBackend().solve(model, SolveSettings(solver=solver))
    # HiGHS's default tolerances (1e-7) end some of these LPs 1e-7 short of the optimum
    # (its own certificate says so): the reference runs at the master's tighter ones.
    tight = SolveSettings(lp_method=LpMethod.SIMPLEX, tuning={"highs": TOLERANCES})
    reference = get_backend("highs").solve(model, tight)
    assert reference.status is Status.OPTIMAL and ours.status is Status.OPTIMAL
    assert ours.objective == pytest.approx(reference.objective, rel=1e-8, abs=1e-10)
    assert ours.row_dual is not None
    certificate = certify(model, ours.x, ours.row_dual)
    assert certificate.proves(GAP), certificate
    return ours


def test_level_lps_of_contended_clusters_end_at_a_certified_vertex_from_the_market() -> None:
    solutions = [agrees(level_model(structure(seed)), None) for seed in range(SNAPSHOTS)]
    by_market = [s.solver == VERTEX and "market" in s.detail for s in solutions]
    # The rest fall back to the interior point (and are certified all the same).
    assert np.mean(by_market) >= 0.9


@pytest.mark.parametrize("kind", ["pinned", "identical", "tie", "single"])
def test_level_lps_with_pinned_identical_tied_jobs_or_one_type_agree(kind: str) -> None:
    """Certified and equal to HiGHS's optimum, and (with the interior point left for the ties
    too many for the crossover) by the vertex methods."""
    solutions = [agrees(level_model(structure(300 + seed, kind)), None) for seed in range(6)]
    assert all(s.status is Status.OPTIMAL for s in solutions)
    assert any(s.solver == VERTEX for s in solutions)


def test_pareto_lps_end_at_a_certified_vertex_from_early_interior_point_prices() -> None:
    solutions = []
    for seed in range(SNAPSHOTS // 3):
        s = structure(100 + seed)
        level = get_backend("highs").solve(level_model(s), SolveSettings()).objective
        assert level is not None
        solutions.append(agrees(pareto_model(s, 0.9 * level)))
    assert any(s.solver == VERTEX for s in solutions)


def test_asked_for_by_name_the_interior_point_answers() -> None:
    solution = BlocksBackend().solve(level_model(structure(7)), SolveSettings(solver="ipm"))
    assert solution.status is Status.OPTIMAL and solution.solver == "ipm"


def test_prices_settled_in_the_masters_face_prove_its_answer_optimal() -> None:
    """From the optimal prices, blocks fixed at their best basis and the split ones free: the
    master's answer is optimal, but prices that are not in its optimal face (here its own
    moved by 5 % per type, as an extreme dual of a degenerate master can be) leave fixed
    blocks looking wrong. The prices settled by the cuts must make every fixed block optimal
    again and, with the master's point, prove the whole LP's optimum (certified here)."""
    rng = np.random.default_rng(0)
    for seed in range(6):
        model = level_model(structure(500 + seed))
        reference = get_backend("highs").solve(
            model, SolveSettings(lp_method=LpMethod.SIMPLEX, tuning={"highs": TOLERANCES})
        )
        assert reference.row_dual is not None
        form = block_form(model, model.shape)  # type: ignore[arg-type]
        part = of_form(form)
        # The form minimizes (−t for max-min): its duals are the model's times −1.
        y_link = form.sign * reference.row_dual[form.row_link]
        linking = form.col_index[form.blocks * form.slots :]
        bases, gap = choose(part, y_link, reference.x[linking])
        free = gap < 1e-12  # the split jobs
        settings = simplex_settings(None, None)
        master = solve_master(part, bases, affine(part, bases), free, settings)
        assert master is not None
        moved = master.y_link * (1.0 + 0.05 * rng.standard_normal(master.y_link.size))
        assert violated(part, bases, (np.zeros(0), np.zeros(0)), moved, primal=False).any()
        settled = duals.settle(part, bases, free, replace(master, y_link=moved), DUAL_TOL, settings)
        assert settled is not None and settled.cuts > 0 and not settled.wrong.any()
        found = assemble(
            form,
            part,
            Answer(bases, free, replace(master, y_link=settled.y_link, y_free=settled.y_free), 1),
        )
        x = model_point(form, model, found.x)
        row_dual = model_duals(form, model, found.y_loc, found.y_link)
        assert certify(model, x, row_dual).proves(GAP)
        assert float(model.cost @ x + model.offset) == pytest.approx(reference.objective, rel=1e-9)
