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
    probe = "import scipy.sparse, sys\nfrom apportion.solver.sparse import sp\nassert sp is scipy.sparse\n"
    subprocess.run([sys.executable, "-c", probe], timeout=120, check=True)
