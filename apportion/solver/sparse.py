"""scipy.sparse, imported without numpy's subpackages that no array namespace uses.

Importing scipy.sparse imports scipy's array-API layer, which copies the numpy namespace by
reading every name numpy exports (`from numpy import *`, then `dir(numpy)`). Three of those
names are lazily loaded subpackages that no array namespace has and a solve never runs: `f2py`
(the Fortran wrapper generator), `testing` and `polynomial`; reading them imports all three, a
large part of a CLI solve's start-up. While scipy.sparse is first imported, numpy's export lists
leave those three out; both lists are restored at once, and `import numpy.testing` and the
others work as usual for anyone who uses them.

The model layer imports scipy.sparse from here, and a solve (CLI, library, service) imports the
model layer before any formulation, so this import is the first. Importing a formulation module
on its own may load scipy directly: that costs only the time. Once scipy.sparse is loaded this
module changes nothing.
"""

from __future__ import annotations

import sys

import numpy as np
from numpy.typing import NDArray

_NOT_COPIED = frozenset({"f2py", "testing", "polynomial"})

if "scipy.sparse" in sys.modules:
    import scipy.sparse as sp
else:
    _all, _dir = np.__all__, np.__dir__
    np.__all__ = [name for name in _all if name not in _NOT_COPIED]
    np.__dir__ = lambda: [name for name in _dir() if name not in _NOT_COPIED]  # type: ignore[method-assign]
    try:
        import scipy.sparse as sp
    finally:
        np.__all__, np.__dir__ = _all, _dir  # type: ignore[method-assign]

__all__ = ["sp", "transpose_dot"]


def transpose_dot(matrix: sp.csr_matrix, y: NDArray[np.float64]) -> NDArray[np.float64]:
    """matrixᵀ @ y for a CSR matrix without building the transpose (which costs more than the
    product on a small model): the same products summed in the same order as scipy's, so the
    same floating-point result."""
    weights = matrix.data * np.repeat(y, np.diff(matrix.indptr))
    out: NDArray[np.float64] = np.bincount(matrix.indices, weights, matrix.shape[1]).astype(
        float, copy=False
    )
    return out
