"""The array types every floor names: numpy arrays of float64, int64 and bool, so that a
signature says what it holds. Defined once, here, at the bottom floor."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]
