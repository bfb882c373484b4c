"""`ApportionClient` with jobs as columns, against the real service: numpy columns sent as they
are, the answer read back into the library's `SolveResult` in either layout."""

from __future__ import annotations

import numpy as np
import pytest

from apportion.client import ApportionClient
from apportion.refdata.synthetic import random_columns
from apportion.solver import InputError, solve
from apportion.solver.result.table import JobTable
from tests.api.service import Service


@pytest.mark.parametrize("layout", ["columns", "rows"])
def test_the_client_reads_either_layout_into_the_library_result(
    service: Service, layout: str
) -> None:
    snapshot = random_columns(120, 3, seed=6)
    snapshot["jobs"]["deadline"] = np.ma.masked_array(np.arange(120.0), mask=np.arange(120) % 2)
    with ApportionClient(service.base) as api:
        remote = api.solve(snapshot, "max_min_fairness", jobs_layout=layout)
    local = solve(snapshot, "max_min_fairness")
    assert isinstance(remote.jobs, JobTable if layout == "columns" else list)
    assert remote.objective == pytest.approx(local.objective, rel=1e-9)
    for mine, theirs in zip(remote.jobs, local.jobs, strict=True):
        assert mine.id == theirs.id
        assert mine.allocation == pytest.approx(theirs.allocation, abs=1e-9)
    job = remote.job("job-7")
    assert job.effective_throughput == pytest.approx(local.job("job-7").effective_throughput)


def test_a_bad_column_raises_the_library_error(service: Service) -> None:
    snapshot = random_columns(10, 2, seed=1)
    snapshot["jobs"]["weight"][4] = -1.0
    with ApportionClient(service.base) as api, pytest.raises(InputError) as caught:
        api.solve(snapshot)
    assert caught.value.errors[0].loc == ("snapshot", "jobs", "weight", 4)
