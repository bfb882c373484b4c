"""The model layer compiles named blocks into one matrix whose rows mean what the blocks said."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from apportion.solver.model import INF, Model, Sense, Take


def test_blocks_stack_into_one_matrix_with_labels() -> None:
    model = Model("m")
    x = model.add_variables("x", 2, upper=3.0, coords=(("job", ["a", "b"]),))
    t = model.add_variables("t", 1, lower=-INF)
    model.add_constraints(
        "share",
        {x: sp.csr_matrix([[1.0, 0.0], [0.0, 2.0]]), t: -np.ones((2, 1))},
        lower=0.0,
        coords=(("job", Take(["a", "b"], np.array([0, 1]))),),
    )
    model.add_constraints("total", {x: np.ones((1, 2))}, upper=4.0)
    model.set_objective({t: 1.0}, Sense.MAXIMIZE)
    compiled = model.compile()
    assert compiled.matrix.toarray().tolist() == [[1, 0, -1], [0, 2, -1], [1, 1, 0]]
    assert compiled.col_names() == ["x[a]", "x[b]", "t"]
    assert compiled.row_names() == ["share[a]", "share[b]", "total"]
    assert compiled.cost.tolist() == [0, 0, 1]
    assert compiled.col_upper.tolist() == [3, 3, INF]
    assert not compiled.is_mip


def test_integer_blocks_mark_a_mip() -> None:
    model = Model("m")
    model.add_variables("y", 3, upper=1.0, integer=True)
    model.add_variables("z", 2)
    assert model.compile().integer.tolist() == [True, True, True, False, False]
