"""The block interior point against HiGHS on the fairness family's own LPs.

Every model is a share LP built by the formulation (`build_share_lp`) from a seeded random
snapshot: max-min's one-level LP, its Pareto LP over floors, and water filling's level LP with
the exceed columns and the entity levels of a bottleneck test. The blocks backend must call it
optimal, HiGHS's simplex must agree on the optimum, and the certificate is recomputed here on
the model from the returned point and duals alone (`certify`): primal violation and relative
gap within 1e-9.
"""

from __future__ import annotations

import numpy as np
import pytest

from apportion.formulations.fairness.pareto import as_floors, floored, total_share_costs
from apportion.formulations.fairness.share_input import Entities, share_input
from apportion.formulations.fairness.share_lp import LevelState, ShareStructure, build_share_lp
from apportion.solver.arrays import ClusterArrays
from apportion.solver.backends import Feature, SolveSettings, choose_backend, get_backend
from apportion.solver.backends.base import LpMethod
from apportion.solver.backends.blocks import TERMINATION, BlocksBackend
from apportion.solver.backends.blocks.ipm import Stop
from apportion.solver.backends.certificate import certify
from apportion.solver.model import BlockShape, CompiledModel, Model, Sense
from apportion.solver.snapshot import parse_snapshot
from apportion.solver.status import Status, Termination

GAP = 1e-9
SNAPSHOTS = 1_000  # per kind of model: thousands of solves in all


def random_structure(seed: int) -> ShareStructure:
    """Up to 40 jobs on up to 8 types, throughputs, weights and scale factors drawn wide, a
    few jobs unable to run on some types, N_k from scarce to plentiful; entities for some."""
    rng = np.random.default_rng(seed)
    jobs, types = int(rng.integers(2, 41)), int(rng.integers(1, 9))
    names = [f"g{k}" for k in range(types)]
    throughput = rng.uniform(0.1, 10.0, (jobs, types)) * (rng.random((jobs, types)) > 0.2)
    throughput[throughput.sum(axis=1) == 0, 0] = 1.0
    snapshot = {
        "gpu_types": [{"name": n, "count": int(rng.integers(1, 3 * jobs) + 3)} for n in names],
        "jobs": [
            {
                "id": f"j{j}",
                "scale_factor": int(rng.choice([1, 1, 2, 4])),
                "weight": float(rng.choice([0.5, 1.0, 2.0, 5.0])),
                "throughput": {n: float(v) for n, v in zip(names, row, strict=True) if v > 0},
            }
            for j, row in enumerate(throughput)
        ],
    }
    snap = parse_snapshot(snapshot)
    problem = ClusterArrays.from_snapshot(snap)
    entities = Entities.single(problem.num_jobs)
    if seed % 3 == 0:
        count = int(rng.integers(2, 5))
        entities = Entities(
            rng.integers(0, count, problem.num_jobs),
            rng.uniform(0.5, 3.0, count),
            [f"e{e}" for e in range(count)],
            np.zeros(count, bool),
        )
    prepared = share_input(snap, problem, problem.throughput, entities, merge=False)
    assert prepared.structure is not None
    return prepared.structure


def max_min_state(s: ShareStructure) -> LevelState:
    return LevelState(
        s.weight.copy(), np.zeros(s.size), np.ones(1), np.ones(1, bool), np.zeros(s.size)
    )


def max_min_model(s: ShareStructure) -> CompiledModel:
    return build_share_lp(s, max_min_state(s), single=True)[0].compile()


def max_min_level(s: ShareStructure) -> float:
    """t* in the original units, by HiGHS."""
    model, blocks = build_share_lp(s, max_min_state(s), single=True)
    solution = get_backend("highs").solve(model.compile(), SolveSettings())
    assert solution.status is Status.OPTIMAL
    return blocks.level_value(solution)


def pareto_model(s: ShareStructure, level: float) -> CompiledModel:
    """The Pareto LP at 90 % of the max-min level (floors w_g · level), total share objective."""
    state = floored(max_min_state(s), level)
    model, b = build_share_lp(s, as_floors(s, state), True, "pareto")
    costs = total_share_costs(b.value, s.groups.count)
    model.set_objective({b.x.block: costs, b.t: -1.0}, Sense.MAXIMIZE)
    return model.compile()


def level_model(s: ShareStructure, rng: np.random.Generator) -> CompiledModel:
    """A water-filling level LP with entity levels: some groups frozen at a floor, the rest
    active with their weight, and (half the time) the bottleneck test's exceed columns."""
    sigma = np.bincount(s.entity, weights=s.weight, minlength=s.num_entities)
    frozen_groups = rng.random(s.size) < 0.3
    frozen_groups[0] = False  # an active group: the level is bounded
    omega = np.where(frozen_groups, 0.0, s.weight)
    sigma = np.bincount(s.entity, weights=omega, minlength=s.num_entities)
    lower = np.where(frozen_groups, 1e-3 * rng.random(s.size), 0.0)
    exceed = np.zeros(s.size)
    if rng.random() < 0.5:
        exceed = np.where(frozen_groups, 0.0, 1e-3 * rng.random(s.size))
    state = LevelState(omega, lower, sigma, sigma > 0, exceed, 0.0)
    return build_share_lp(s, state)[0].compile()


#: Of the random snapshots, at least this share must be certified by the block interior point
#: itself (the rest stall at a degenerate vertex and go to the general backend: see
#: `test_uncertified_answers_go_to_the_general_backend`).
CERTIFIED = 0.99


def agree(model: CompiledModel) -> bool:
    """True when the blocks backend certified `model`; whatever it calls optimal must agree
    with HiGHS and carry a certificate that holds on the model."""
    ours = BlocksBackend().solve(model, SolveSettings())
    reference = get_backend("highs").solve(model, SolveSettings(lp_method=LpMethod.SIMPLEX))
    assert reference.status is Status.OPTIMAL
    if ours.status is not Status.OPTIMAL:
        assert ours.termination is not Termination.OPTIMAL
        assert (
            ours.extra["relative_gap"] > GAP
            or "stalled" in ours.detail
            or any(ours.extra[k] > GAP for k in ("primal_violation", "dual_violation"))
        )
        return False
    assert ours.objective == pytest.approx(reference.objective, rel=1e-8, abs=1e-10)
    assert ours.row_dual is not None
    certificate = certify(model, ours.x, ours.row_dual)
    assert certificate.proves(GAP), certificate
    assert ours.extra["relative_gap"] == certificate.relative_gap
    return True


@pytest.mark.parametrize("chunk", range(4))
def test_max_min_lps_agree_with_highs(chunk: int) -> None:
    seeds = range(chunk * SNAPSHOTS // 4, (chunk + 1) * SNAPSHOTS // 4)
    certified = [agree(max_min_model(random_structure(seed))) for seed in seeds]
    assert np.mean(certified) >= CERTIFIED


@pytest.mark.parametrize("chunk", range(2))
def test_pareto_lps_agree_with_highs(chunk: int) -> None:
    seeds = range(chunk * SNAPSHOTS // 2, (chunk + 1) * SNAPSHOTS // 2)
    certified = []
    for seed in seeds:
        s = random_structure(seed)
        certified.append(agree(pareto_model(s, 0.9 * max_min_level(s))))
    assert np.mean(certified) >= CERTIFIED


@pytest.mark.parametrize("chunk", range(2))
def test_level_lps_agree_with_highs(chunk: int) -> None:
    seeds = range(chunk * SNAPSHOTS // 2, (chunk + 1) * SNAPSHOTS // 2)
    certified = [
        agree(level_model(random_structure(seed), np.random.default_rng(10_000 + seed)))
        for seed in seeds
    ]
    assert np.mean(certified) >= CERTIFIED


def test_every_stop_has_a_termination() -> None:
    assert set(TERMINATION) == set(Stop)
    assert TERMINATION[Stop.CONVERGED] is Termination.OPTIMAL
    assert TERMINATION[Stop.TIME] is Termination.TIME_LIMIT


def test_a_model_without_a_shape_is_refused() -> None:
    model = Model("plain")
    x = model.add_variables("x", 2, upper=1.0)
    model.add_constraints("row", {x: np.ones((1, 2))}, upper=1.0)
    model.set_objective({x: 1.0}, Sense.MAXIMIZE)
    with pytest.raises(ValueError, match="block shape"):
        BlocksBackend().solve(model.compile(), SolveSettings())


def test_a_wrong_shape_is_an_error_not_an_answer() -> None:
    """Two blocks that share a column are not blocks: the answer says so."""
    model = Model("shared")
    x = model.add_variables("x", 2)
    model.add_constraints("a", {x: np.array([[1.0, 1.0], [0.0, 1.0]])}, upper=1.0)
    model.set_objective({x: 1.0}, Sense.MAXIMIZE)
    model.shape = BlockShape(np.array([[0], [1]]), np.array([[0], [1]]))
    solution = BlocksBackend().solve(model.compile(), SolveSettings())
    assert solution.status is Status.ERROR and "block shape" in solution.detail


def test_auto_picks_the_shape_backend_only_for_shaped_interior_point_lps() -> None:
    assert Feature.BLOCKS in choose_backend("auto", False, LpMethod.IPM, shaped=True).features
    assert Feature.BLOCKS not in choose_backend("auto", False, LpMethod.IPM).features
    assert (
        Feature.BLOCKS not in choose_backend("auto", False, LpMethod.SIMPLEX, shaped=True).features
    )
    assert Feature.BLOCKS not in choose_backend("auto", True, LpMethod.IPM, shaped=True).features


def test_time_limit_is_a_limit() -> None:
    model = max_min_model(random_structure(7))
    solution = BlocksBackend().solve(model, SolveSettings(time_limit=0.0))
    assert solution.termination is Termination.TIME_LIMIT
    assert solution.status is not Status.OPTIMAL


def test_uncertified_answers_go_to_the_general_backend() -> None:
    """A block interior point stopped before its certificate (here by the model's own time
    limit) hands the model, through the context, to the general backend, which answers it."""
    from apportion.solver.context import SolveContext, SolveRequest
    from apportion.solver.options import SolveOptions

    s = random_structure(5)
    model = build_share_lp(s, max_min_state(s), single=True)[0]
    ctx = SolveContext.for_request(SolveOptions())
    solution = ctx.solve(SolveRequest(model, LpMethod.IPM, time_limit=0.0))
    assert solution.status is Status.OPTIMAL
    assert [entry.backend for entry in ctx.books] == ["blocks", "clarabel"]
    reference = get_backend("highs").solve(model.compile(), SolveSettings())
    assert solution.objective == pytest.approx(reference.objective, rel=1e-8)
