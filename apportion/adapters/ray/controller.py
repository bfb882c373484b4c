"""The shared controller (`adapters.framework.Controller`) for Ray: the integration sends a
round's commands off at once, and the round ends once Ray has answered every one of them
(`RayIntegration.finish`), the refused ones in the round's report."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from apportion.adapters.framework import Controller, RoundPlanner, RoundReport, Settings
from apportion.adapters.ray.integration import RayIntegration
from apportion.adapters.ray.managed import RayState
from apportion.adapters.ray.queue import QueuedJob


class RayController(Controller[RayState, QueuedJob]):
    """Rounds on Ray, each enacted in full when `step` returns."""

    def __init__(
        self, integration: RayIntegration, planner: RoundPlanner, settings: Settings, **kw: Any
    ) -> None:
        super().__init__(integration, planner, settings, **kw)
        self.ray = integration

    def step(self) -> RoundReport[QueuedJob]:
        report = super().step()
        refused = self.ray.finish()
        return replace(report, failed=report.failed + refused) if refused else report
