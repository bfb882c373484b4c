"""The vertex methods of the blocks backend (`solver="vertex"`) against HiGHS on contended,
heterogeneous max-min LPs: the market's prices then the crossover for the level LP, the
interior point's early prices then the crossover for the Pareto LP. Whatever is called
optimal must agree with HiGHS's simplex and carry a certificate recomputed here on the model
(primal violation and relative gap within 1e-9)."""

from __future__ import annotations

import numpy as np
import pytest

from apportion.formulations.fairness.pareto import as_floors, floored, total_share_costs
from apportion.formulations.fairness.share_input import Entities, share_input
from apportion.formulations.fairness.share_lp import LevelState, ShareStructure, build_share_lp
from apportion.refdata.synthetic import contended_columns
from apportion.solver.arrays import ClusterArrays
from apportion.solver.backends import SolveSettings, get_backend
from apportion.solver.backends.base import LpMethod, Solution
from apportion.solver.backends.blocks import VERTEX, BlocksBackend
from apportion.solver.backends.blocks.master import TOLERANCES
from apportion.solver.backends.certificate import certify
from apportion.solver.model import CompiledModel, Sense
from apportion.solver.snapshot import parse_snapshot
from apportion.solver.status import Status

GAP = 1e-9
SNAPSHOTS = 24


def structure(seed: int) -> ShareStructure:
    rng = np.random.default_rng(seed)
    jobs, types = int(rng.integers(150, 400)), int(rng.integers(2, 9))
    snap = parse_snapshot(contended_columns(jobs, types, seed=seed))
    problem = ClusterArrays.from_snapshot(snap)
    entities = Entities.single(problem.num_jobs)
    prepared = share_input(snap, problem, problem.throughput, entities, merge=False)
    assert prepared.structure is not None
    return prepared.structure


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


def agrees(model: CompiledModel) -> Solution:
    ours = BlocksBackend().solve(model, SolveSettings(solver=VERTEX))
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
    solutions = [agrees(level_model(structure(seed))) for seed in range(SNAPSHOTS)]
    by_market = [s.solver == VERTEX and "market" in s.detail for s in solutions]
    # The rest fall back to the interior point (and are certified all the same).
    assert np.mean(by_market) >= 0.75


def test_pareto_lps_end_at_a_certified_vertex_from_early_interior_point_prices() -> None:
    solutions = []
    for seed in range(SNAPSHOTS // 3):
        s = structure(100 + seed)
        level = get_backend("highs").solve(level_model(s), SolveSettings()).objective
        assert level is not None
        solutions.append(agrees(pareto_model(s, 0.9 * level)))
    assert any(s.solver == VERTEX for s in solutions)


def test_without_the_vertex_solver_the_interior_point_answers() -> None:
    solution = BlocksBackend().solve(level_model(structure(7)), SolveSettings())
    assert solution.status is Status.OPTIMAL and solution.solver == "ipm"
