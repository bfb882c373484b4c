"""Options the elastic policies share."""

from __future__ import annotations

from pydantic import Field

from apportion.formulations.elastic.model import Presolve
from apportion.solver.options import PolicyOptions


class TuningOptions(PolicyOptions):
    presolve: Presolve = Field(
        "auto",
        description="The solver's presolve: auto (what was measured best on these models, per "
        "backend: off on HiGHS), on or off. A search setting: it never changes the optimum.",
    )


class ElasticOptions(TuningOptions):
    restart_factor: bool = Field(
        True,
        description="Discount every configuration that would restart a running job by Sia's "
        "re-allocation factor max(age − restarts × restart_seconds, 0) / (age + "
        "restart_seconds) (1 while age < restart_seconds).",
    )
