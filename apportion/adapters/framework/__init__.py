"""The shared ground of every scheduler adapter: a small interface each integration implements
(`integration.Integration`, plus optional capabilities), and what they all share: the planner
(the policy asked through one `client.Client`, in process or of a running service), the
received-time ledger and its state file, the round as actions per job, the controller with its
fail-safe rules, and the command line's common options. An integration (`adapters.slurm`)
holds only its scheduler's I/O.

See docs/ARCHITECTURE.md, "Adding a scheduler adapter".
"""

from __future__ import annotations

from apportion.adapters.framework.actions import Action, Kind
from apportion.adapters.framework.controller import Controller, RoundReport, Settings
from apportion.adapters.framework.integration import (
    Checked,
    Closes,
    Command,
    Commands,
    EnactError,
    Fits,
    Integration,
    ReadError,
    Restarts,
    Seen,
    SetupError,
)
from apportion.adapters.framework.planner import Decision, PlanError, RoundPlanner
from apportion.adapters.framework.view import Job, Managed, View

__all__ = [
    "Action",
    "Checked",
    "Closes",
    "Command",
    "Commands",
    "Controller",
    "Decision",
    "EnactError",
    "Fits",
    "Integration",
    "Job",
    "Kind",
    "Managed",
    "PlanError",
    "ReadError",
    "Restarts",
    "RoundPlanner",
    "RoundReport",
    "Seen",
    "Settings",
    "SetupError",
    "View",
]
