"""Grouping a family's pieces into jobs: `jobs` sets of k distinct nodes (node i used count_i
times) with the least Σ_jobs max worst, the worst pieces sharing jobs.

In order, worst first, when that keeps every job's nodes distinct; else the better of a greedy
grouping (`forced_first`) and the assignment MILP
    a_ij ∈ {0,1} (node i in job j),  m_j ≥ worst_i a_ij,  minimize Σ_j m_j
    Σ_j a_ij = count_i,  Σ_i a_ij = k,  m_j ≥ m_j+1 (jobs are interchangeable)
solved under a short time limit.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from apportion.formulations.placement.model import matrix
from apportion.solver.arraytypes import FloatArray, IntArray
from apportion.solver.context import SolveContext, SolveRequest
from apportion.solver.model import Block, Model, Sense
from apportion.solver.options import SolveOptions

# Grouping a family's pieces into jobs is a tiny MILP, but a family of many jobs can make it
# slow; past this the best grouping found (or a round-robin deal) is used. A worse grouping only
# lowers the placement's true value: the bound test then decides, nothing is claimed wrongly.
GROUPING_SECONDS = 0.05


def group_pieces(
    nodes: IntArray,
    count: IntArray,
    worst: FloatArray,
    jobs: int,
    k: int,
    ctx: SolveContext | None = None,
) -> list[list[int]]:
    """`jobs` sets of k distinct nodes (node i used count_i times) minimizing Σ_jobs max worst:
    in order, worst first, when that keeps every job's nodes distinct; else the better of
    `forced_first` and the assignment MILP, solved in `ctx` (a context of its own without one;
    a node can serve every job: count_i ≤ jobs)."""
    order = np.argsort(-worst, kind="stable")
    pieces = np.repeat(nodes[order], count[order])
    consecutive = pieces.reshape(jobs, k)
    if all(np.unique(row).size == k for row in consecutive):
        return [row.tolist() for row in consecutive]
    # The MILP may stop at its time limit with a worse grouping than the greedy one.
    value = dict(zip(nodes.tolist(), worst.tolist(), strict=True))
    solver = ctx if ctx is not None else SolveContext(SolveOptions.model_validate({}))
    options = [
        forced_first(nodes, count, worst, jobs, k),
        _assign(solver, nodes, count, worst, jobs, k),
    ]
    return min(options, key=lambda grouping: sum(max(value[n] for n in job) for job in grouping))


def forced_first(
    nodes: IntArray, count: IntArray, worst: FloatArray, jobs: int, k: int
) -> list[list[int]]:
    """Jobs one at a time, each with the worst pieces left, except that a node with a piece for
    every job still to fill must join this one (else it would need one job twice). What is left
    after each job can always be grouped: every count stays within the jobs remaining."""
    left = dict(zip(nodes.tolist(), count.tolist(), strict=True))
    rank = {n: i for i, n in enumerate(nodes[np.argsort(-worst, kind="stable")].tolist())}
    out: list[list[int]] = []
    for remaining in range(jobs, 0, -1):
        forced = [n for n, c in left.items() if c == remaining]
        free = sorted((n for n, c in left.items() if 0 < c < remaining), key=rank.__getitem__)
        job = forced + free[: k - len(forced)]
        for n in job:
            left[n] -= 1
        out.append(job)
    return out


def assignment(
    nodes: IntArray, count: IntArray, worst: FloatArray, jobs: int, k: int
) -> tuple[Model, Block]:
    """The assignment MILP of the module docstring and its a block (column i·jobs + j)."""
    n = nodes.size
    cells = np.arange(n * jobs)
    node_of, job_of = cells // jobs, cells % jobs
    model = Model("piece_grouping")
    a = model.add_variables(
        "in_job",
        cells.size,
        upper=1.0,
        integer=True,
        coords=(("node", nodes[node_of].tolist()), ("job", job_of.tolist())),
    )
    m = model.add_variables("job_worst", jobs, coords=(("job", list(range(jobs))),))
    model.add_constraints(
        "node_pieces",
        {a: matrix(node_of, cells, 1.0, (n, cells.size))},
        lower=count.astype(float),
        upper=count.astype(float),
        coords=(("node", nodes.tolist()),),
    )
    model.add_constraints(
        "job_nodes",
        {a: matrix(job_of, cells, 1.0, (jobs, cells.size))},
        lower=float(k),
        upper=float(k),
    )
    model.add_constraints(
        "job_worst",
        {m: matrix(cells, job_of, 1.0, (cells.size, jobs)), a: sp.diags(-worst[node_of])},
        lower=0.0,
    )
    if jobs > 1:
        order = np.arange(jobs - 1)
        shape = (order.size, jobs)
        model.add_constraints(
            "job_order",
            {m: matrix(order, order, 1.0, shape) - matrix(order, order + 1, 1.0, shape)},
            lower=0.0,
        )
    model.set_objective({m: np.ones(jobs)}, Sense.MINIMIZE)
    return model, a


def _assign(
    ctx: SolveContext, nodes: IntArray, count: IntArray, worst: FloatArray, jobs: int, k: int
) -> list[list[int]]:
    """The assignment MILP's grouping, or a round-robin deal (always valid) when it finds none
    within `GROUPING_SECONDS`."""
    model, a = assignment(nodes, count, worst, jobs, k)
    solution = ctx.solve(SolveRequest(model, time_limit=GROUPING_SECONDS, auxiliary=True))
    if not solution.status.has_solution:
        pieces = np.repeat(nodes, count)
        return [pieces[j::jobs].tolist() for j in range(jobs)]
    take = np.rint(solution.x[a.span]).reshape(nodes.size, jobs) > 0
    return [nodes[take[:, j]].tolist() for j in range(jobs)]
