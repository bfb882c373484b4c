"""The greedy schedule handed to the MILP is a complete point of it: every column set (the
contention ones from the choices by their rows), every row and bound satisfied, so the solver
never has to complete it (a MIP of its own, seconds at 128 nodes)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from apportion.formulations.placement.options import ContentionPlacementOptions
from apportion.formulations.placement.schedule.greedy import greedy_start
from apportion.formulations.placement.schedule.instance import build_schedule
from apportion.formulations.placement.schedule.model import build
from apportion.formulations.placement.schedule.start import start_vector
from apportion.solver.snapshot import parse_snapshot
from tests.formulations.placement.brute import contention_json
from tests.formulations.placement.schedule.brute import random_snapshot, random_table


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("moves", ["none", "preempt", "migrate"])
def test_the_start_is_a_feasible_point_of_the_whole_model(seed: int, moves: str) -> None:
    rng = random.Random(seed)
    snapshot = random_snapshot(rng)
    snapshot["contention"] = contention_json(random_table(rng, snapshot))
    scope = "all" if seed % 2 else "multi_node"
    options = ContentionPlacementOptions.model_validate(
        {"moves": moves, "w1": 0.5, "contention_scope": scope}
    )
    inst = build_schedule(parse_snapshot(snapshot), options)
    start, cut = greedy_start(inst, 0.5)
    assert not cut
    built = build(inst, 0.5, 0.1)
    index, x = start_vector(inst, built, start)
    compiled = built.model.compile()
    assert np.array_equal(index, np.arange(compiled.num_cols))
    rows = compiled.matrix @ x
    assert (rows >= compiled.row_lower - 1e-9).all() and (rows <= compiled.row_upper + 1e-9).all()
    assert (x >= compiled.col_lower - 1e-9).all() and (x <= compiled.col_upper + 1e-9).all()
    integer = compiled.integer.astype(bool)
    assert np.allclose(x[integer], np.round(x[integer]))
