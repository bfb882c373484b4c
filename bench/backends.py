"""The same models on every backend: what cvxpy's and PuLP's modelling layers cost.

Max-min fairness (an LP) at 256, 2,048 and 20,000 all-distinct jobs × 8 GPU types through the
public `solve`, and a lease-admission MILP shaped like Chronus (FORMULATIONS §6) handed straight
to each backend. "build" is the model layer's compile plus the backend's own model building
(cvxpy expressions and canonicalization, PuLP objects); "solve" is the solver call.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from apportion.refdata.synthetic import random_snapshot
from apportion.solver.backends import SolveSettings, get_backend
from apportion.solver.model import CompiledModel, Model, Sense
from bench.harness import Case, Row
from bench.objectives import gavel, with_deadlines

GROUP = "backends"
LP_SIZES = (256, 2_048, 20_000)
# (backend, sub-solver): auto (Clarabel here), HiGHS direct, and the modelling layers' defaults
# plus their HiGHS options.
LP_PAIRS: tuple[tuple[str, str | None], ...] = (
    ("auto", None),
    ("highs", None),
    ("cvxpy", "CLARABEL"),
    ("cvxpy", "HIGHS"),
    ("pulp", "CBC"),
    ("pulp", "HiGHS"),
)
MILP_PAIRS: tuple[tuple[str, str | None], ...] = (
    ("highs", None),
    ("cvxpy", "HIGHS"),
    ("cvxpy", "SCIPY"),
    ("pulp", "CBC"),
    ("pulp", "HiGHS"),
)
MILP_SIZES = (40, 120)
TIME_LIMIT = 120.0


def cases() -> list[Case]:
    # Import cvxpy and PuLP now: the first request to a fresh process pays ~1.2 s for cvxpy's
    # import, which is not what these rows compare.
    for name in ("cvxpy", "pulp"):
        get_backend(name)
    out = []
    for jobs in LP_SIZES:
        for backend, solver in LP_PAIRS:
            options: dict[str, Any] = {"backend": backend, "time_limit": TIME_LIMIT}
            if solver is not None:
                options["solver"] = solver
            out.append(
                Case(
                    GROUP,
                    f"max-min LP, 8 types, {_pair(backend, solver)}",
                    lambda j=jobs: random_snapshot(j, 8, seed=1),
                    "max_min_fairness",
                    options=options,
                )
            )
    for jobs in MILP_SIZES:
        for backend, solver in MILP_PAIRS:
            out.append(
                Case(
                    GROUP,
                    f"lease-admission MILP, {_pair(backend, solver)}",
                    lambda: {},
                    "(model)",
                    runner=lambda case, j=jobs, b=backend, s=solver: run_milp(case, j, b, s),
                )
            )
    # The instance as `deadline_admission` solves it, on the default backend without a time
    # limit: what a user of the default path waits.
    for jobs in MILP_SIZES:
        out.append(
            Case(
                GROUP,
                "lease admission through deadline_admission, default backend",
                lambda j=jobs: lease_snapshot(j),
                "deadline_admission",
                options={"time_limit": TIME_LIMIT, "mip_gap": 1e-4},
                target_seconds=2.0 if jobs == MILP_SIZES[0] else None,
                baseline={"time_limit": TIME_LIMIT, "mip_gap": 1e-4, "backend": "pulp"},
            )
        )
    # The same through `solve`, on real MILP policies: over-subscribed SLOs (two MILPs) and
    # DeepShare's 4 × 8 placement.
    for backend, solver in MILP_PAIRS:
        options = {"backend": backend, "time_limit": TIME_LIMIT}
        if solver is not None:
            options["solver"] = solver
        out.append(
            Case(
                GROUP,
                f"min_cost_slo over-subscribed, {_pair(backend, solver)}",
                lambda: with_deadlines(gavel(1_024), 5, 1.0),
                "min_cost_slo",
                options=options,
            )
        )
        out.append(
            Case(
                GROUP,
                f"contention placement DeepShare 4×8, {_pair(backend, solver)}",
                deepshare_cluster,
                "contention_placement",
                options=options,
            )
        )
    return out


def deepshare_cluster() -> dict[str, Any]:
    """DeepShare's 4 × 8 snapshot with its published contention table."""
    from apportion.refdata import FIXTURES, SOURCE
    from apportion.refdata.deepshare import read_contention_csv

    snapshot = json.loads((FIXTURES / "deepshare_cluster.json").read_text())
    table = read_contention_csv(SOURCE / "deepshare_shared_thp_ratio.csv")
    return {**snapshot, "contention": table.model_dump()}


def _pair(backend: str, solver: str | None) -> str:
    return backend if solver is None else f"{backend}/{solver}"


@dataclass(frozen=True)
class LeaseInstance:
    """Chronus-style options i = (job, deadline) with GPUs r_i, leases L_i, usable slots M_i
    and values w_i (10/8/5 by option rank), on C GPUs of 8-GPU nodes."""

    job: np.ndarray
    size: np.ndarray
    leases: np.ndarray
    usable: np.ndarray
    value: np.ndarray
    slots: int
    gpus: int


def lease_instance(num_jobs: int, slots: int = 12, gpus: int = 32, seed: int = 3) -> LeaseInstance:
    rng = np.random.default_rng(seed)
    per_job = rng.integers(1, 4, num_jobs)  # 1-3 deadline options
    job = np.repeat(np.arange(num_jobs), per_job)
    rank = np.arange(job.size) - np.repeat(np.cumsum(per_job) - per_job, per_job)
    size = rng.choice([1, 2, 4, 8], num_jobs, p=[0.4, 0.3, 0.2, 0.1])[job].astype(float)
    leases = rng.integers(1, 5, num_jobs)[job]
    usable = np.minimum(slots, leases + rng.integers(0, 4, num_jobs)[job] + 2 * rank)
    value = np.array([10.0, 8.0, 5.0])[rank]
    return LeaseInstance(job, size, leases, usable, value, slots, gpus)


def lease_admission(num_jobs: int) -> Model:
    """The paper's formulation of the instance: x_it binary for t < M_i per option, s_i binary.

    maximize Σ w_i s_i + Σ (r_i / C) x_i0  s.t.  Σ_t x_it = L_i s_i,  Σ_i r_i x_it ≤ C ∀t,
    Σ_v s_(j,v) ≤ 1 per job.
    """
    case = lease_instance(num_jobs)
    job, size, leases, gpus = case.job, case.size, case.leases, case.gpus
    option, slot = np.nonzero(np.arange(case.slots)[None, :] < case.usable[:, None])
    m = Model("lease_admission")
    x = m.add_variables("x", option.size, upper=1.0, integer=True)
    s = m.add_variables("s", job.size, upper=1.0, integer=True)
    ones = np.ones(option.size)
    per_option = sp.csr_matrix((ones, (option, np.arange(option.size))), (job.size, option.size))
    m.add_constraints(
        "leases", {x: per_option, s: -sp.diags(leases.astype(float))}, lower=0.0, upper=0.0
    )
    per_slot = sp.csr_matrix(
        (size[option], (slot, np.arange(option.size))), (case.slots, option.size)
    )
    m.add_constraints("capacity", {x: per_slot}, upper=float(gpus))
    per_job_rows = sp.csr_matrix((np.ones(job.size), (job, np.arange(job.size))))
    m.add_constraints("one_option", {s: per_job_rows}, upper=1.0)
    m.set_objective(
        {s: case.value, x: np.where(slot == 0, size[option] / gpus, 0.0)}, Sense.MAXIMIZE
    )
    return m


def lease_snapshot(num_jobs: int) -> dict[str, Any]:
    """The same instance as a deadline snapshot (now = 0, 20-minute leases): what
    `deadline_admission` solves with its own formulation (one slot set per job, energy rows,
    σ applied after value). Its optimum is the paper model's less the σ term (≤ 1)."""
    case = lease_instance(num_jobs)
    lease = 1200.0
    jobs = []
    for j in range(num_jobs):
        mine = np.flatnonzero(case.job == j)
        jobs.append(
            {
                "id": f"j{j}",
                "scale_factor": int(case.size[mine[0]]),
                "remaining_time": lease * float(case.leases[mine[0]]),
                "deadlines": [
                    {"time": lease * float(case.usable[i]), "value": float(case.value[i])}
                    for i in mine
                ],
            }
        )
    return {
        "gpu_types": [{"name": "v100", "count": case.gpus}],
        "nodes": [{"id": f"n{i}", "gpus": 8} for i in range(case.gpus // 8)],
        "lease_seconds": lease,
        "now": 0,
        "jobs": jobs,
    }


def run_milp(case: Case, jobs: int, backend: str, solver: str | None) -> Row:
    started = time.perf_counter()
    model: CompiledModel = lease_admission(jobs).compile()
    compiled = time.perf_counter() - started
    settings = SolveSettings(time_limit=TIME_LIMIT, mip_rel_gap=1e-4, solver=solver)
    solution = get_backend(backend).solve(model, settings)
    total = time.perf_counter() - started
    return Row(
        case=case,
        jobs=jobs,
        types=0,
        validate=0.0,
        build=compiled + solution.build_seconds,
        solve=solution.solve_seconds,
        total=total,
        objective=solution.objective,
        status=solution.status.value,
        backend=f"{backend}/{solution.solver}",
        ratio=None,
        note=f"{model.num_cols} cols × {model.num_rows} rows",
    )
