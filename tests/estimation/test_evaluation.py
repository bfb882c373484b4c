"""Leave one job type out of Gavel's co-location table, three measured pairs per new job: the
median relative error of its other pairs against the naive guess (the reference types' mean
co-location ratio), recomputed here from the table."""

from __future__ import annotations

import numpy as np
import pytest

from apportion.estimation.evaluation import leave_one_out
from apportion.refdata.synthetic import load_gavel_table


@pytest.mark.slow
def test_completion_beats_the_naive_guess_by_half() -> None:
    table = load_gavel_table()
    held = leave_one_out(table, scale_factor=1, measured=3)
    assert len(held) == 26 and all(len(h.measured) == 3 for h in held)
    errors = np.concatenate([h.errors for h in held])
    naive = np.concatenate([h.naive for h in held])
    assert len(errors) == len(naive) > 3000
    assert np.median(errors) <= 0.5 * np.median(naive)
    # The intervals are honest: about the level asked for (95 %) holds the truth.
    covered = sum(h.covered for h in held) / len(errors)
    assert 0.9 <= covered <= 0.99
