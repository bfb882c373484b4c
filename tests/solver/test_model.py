"""The model layer compiles named blocks into one matrix whose rows mean what the blocks said."""

from __future__ import annotations

import numpy as np
import pytest
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


def test_terms_of_every_form_compile_to_what_scipy_makes_of_them() -> None:
    """CSR terms (duplicates and unsorted columns included), dense ones and other formats land
    in the matrix as `scipy.sparse` sums them, with per-element and per-block bounds."""
    rng = np.random.default_rng(3)
    model = Model("m")
    x = model.add_variables("x", 4, lower=np.arange(4.0), upper=INF)
    y = model.add_variables("y", 3, upper=[1.0])
    rows, cols = rng.integers(0, 5, 30), rng.integers(0, 4, 30)
    values = rng.normal(size=30)
    shuffled = sp.csr_matrix((values, (rows, cols)), shape=(5, 4))
    shuffled.indices = shuffled.indices[::-1].copy()  # out of order within rows
    shuffled.data = shuffled.data[::-1].copy()
    dense = rng.normal(size=(5, 3)) * (rng.random((5, 3)) < 0.5)
    model.add_constraints("a", {x: shuffled, y: dense}, upper=np.arange(5.0))
    other = sp.csc_matrix(rng.normal(size=(2, 4)))
    repeated = sp.coo_matrix(([1.0, 2.0, 4.0], ([0, 0, 1], [1, 1, 2])), shape=(2, 3))
    model.add_constraints("b", {x: other, y: repeated}, lower=-1.0)
    compiled = model.compile()
    expected = sp.bmat([[shuffled, sp.coo_matrix(dense)], [other, repeated]]).toarray()
    assert np.array_equal(compiled.matrix.toarray(), expected)
    assert compiled.matrix.has_canonical_format
    assert compiled.col_lower.tolist() == [0, 1, 2, 3, 0, 0, 0]
    assert compiled.col_upper.tolist() == [INF] * 4 + [1.0] * 3
    assert compiled.row_upper.tolist() == [0, 1, 2, 3, 4, INF, INF]
    assert compiled.row_lower.tolist() == [-INF] * 5 + [-1.0, -1.0]


def test_bounds_of_the_wrong_length_are_refused() -> None:
    model = Model("m")
    with pytest.raises(ValueError):
        model.add_variables("x", 3, lower=np.zeros(2))
