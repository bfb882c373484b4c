"""scipy.sparse through `solver.sparse`: numpy's build and test tools stay unloaded, numpy's
export lists come back exactly as they were, and scipy's array namespace still works."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, sys
import numpy
exported, listed = list(numpy.__all__), sorted(dir(numpy))
from apportion.solver.sparse import sp
skipped = sorted(m for m in ("numpy.f2py", "numpy.testing", "numpy.polynomial") if m in sys.modules)
same = numpy.__all__ == exported and sorted(dir(numpy)) == listed
from scipy._lib._array_api import array_namespace
xp = array_namespace(numpy.ones(3))
product = (sp.csc_matrix(numpy.eye(3)) @ numpy.arange(3.0)).tolist()
import numpy.testing
json.dump({"skipped": skipped, "same": same, "asarray": xp.asarray([1, 2]).tolist(),
           "product": product, "testing": hasattr(numpy.testing, "assert_allclose")}, sys.stdout)
"""


def test_scipy_sparse_loads_without_numpys_tools_and_numpy_is_left_as_it_was() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, check=True
    )
    seen = json.loads(done.stdout)
    assert seen["skipped"] == []
    assert seen["same"] is True
    assert seen["asarray"] == [1, 2]
    assert seen["product"] == [0.0, 1.0, 2.0]
    assert seen["testing"] is True


def test_an_earlier_scipy_import_is_used_as_it_is() -> None:
    probe = (
        "import scipy.sparse, sys\nfrom apportion.solver.sparse import sp\n"
        "assert sp is scipy.sparse\n"
    )
    subprocess.run([sys.executable, "-c", probe], timeout=120, check=True)


def test_transpose_dot_is_scipys_product_to_the_last_bit() -> None:
    """The same products summed in the same order: equal floats, not merely close ones, on
    matrices with empty rows, empty columns, repeated and unsorted entries."""
    import numpy as np
    import scipy.sparse as scipy_sparse

    from apportion.solver.sparse import transpose_dot

    rng = np.random.default_rng(11)
    for _ in range(50):
        m, n, nnz = (int(v) for v in rng.integers(1, 40, 3))
        rows, cols = rng.integers(0, m, nnz), rng.integers(0, n, nnz)
        matrix = scipy_sparse.csr_matrix(
            (rng.normal(size=nnz) * 10.0 ** rng.integers(-8, 8, nnz), (rows, cols)), shape=(m, n)
        )
        if rng.random() < 0.5:
            matrix.indices, matrix.data = matrix.indices[::-1].copy(), matrix.data[::-1].copy()
        y = rng.normal(size=m) * 10.0 ** rng.integers(-8, 8, m)
        expected = matrix.T @ y
        assert transpose_dot(matrix, y).tolist() == expected.tolist()
