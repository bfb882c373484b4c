"""The placement ILP of Tiresias's appendix (FORMULATIONS §10c): place one job's W workers and K
parameter servers so that the most loaded node carries the least network traffic.

A job with model size M = Σ_k s_k has K = W parameter servers (one per worker, TensorFlow's
round-robin of tensors gives PS k the load s_k). A worker exchanges the whole model with the
PSs, except what the PSs on its own node hold; a PS exchanges its share with every worker on
another node. With w_n workers and the PSs P_n on node n (S_n = Σ_{k∈P_n} s_k), the node's
traffic is

    T_n = t_n + M w_n + W S_n − 2 w_n S_n          (t_n: what running jobs already send)

Variables w_n ∈ {0..f_n} (f_n free GPUs), u_n ∈ {0,1} (n hosts workers), p_kn ∈ {0,1} (PS k on
n; a PS runs on one of the job's worker nodes, as Tiresias's simulator places them), z_kn = w_n
p_kn, and the load L:

    minimize L   s.t.  Σ_n w_n = W,  u_n ≤ w_n ≤ f_n u_n,  Σ_n p_kn = 1,  p_kn ≤ u_n,
                       t_n + M w_n + W Σ_k s_k p_kn − 2 Σ_k s_k z_kn ≤ L,
                       z_kn ≤ w_n,  z_kn ≤ min(f_n, W) p_kn,  z ≥ 0.

T_n falls as z grows, so the upper bounds on z are exact (z_kn = w_n p_kn at every node that
matters). Then, with L held at its optimum, the second level (the appendix's other aim) makes
the least total traffic: maximize Σ_kn s_k z_kn, the traffic kept inside nodes.

What makes it fast (the authors found the ILP "extremely slow" at scale):
- PSs without tensors carry nothing and are placed last, on any worker node;
- a node is left out when W others have at least its free GPUs and at most its load: some of
  those W is then unused in any placement, and moving this node's share there raises no load
  (exact dominance; a node without free GPUs hosts nothing);
- two bounds on L: every node's own traffic (L ≥ max_n t_n), and the node that hosts the
  heaviest PS s_max with c ≥ 1 of the workers, which carries at least t_n + M c + s_max (W − 2c)
  (M (W − c) when W − 2c < 0: further PSs there then lower its traffic): L ≥ the least of these
  over every node and c ≤ f_n. Greedy placements built around the best of those (node, c)
  pairs are the starting incumbent; when one meets the bound, no solve is needed, and a solve
  starts from it with L bounded below.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from apportion.solver.arraytypes import FloatArray, IntArray
from apportion.solver.context import SolveContext, SolveRequest
from apportion.solver.model import Block, Model, Sense
from apportion.solver.sparse import sp
from apportion.solver.status import Status, relative_gap


def ps_loads(tensors: FloatArray, workers: int) -> FloatArray:
    """Each of the job's `workers` PSs' share of the model, tensors dealt round-robin."""
    owner = np.arange(tensors.size) % max(workers, 1)
    return np.bincount(owner, weights=tensors, minlength=workers).astype(float)


def job_traffic(nodes: IntArray, gpus: IntArray, tensors: FloatArray | None, n: int) -> FloatArray:
    """The traffic a running job puts on each of `n` nodes: its workers in placement order,
    PS k on worker k's node (Tiresias's simulator); nothing for one GPU or no tensor sizes."""
    out = np.zeros(n)
    workers = int(gpus.sum())
    if tensors is None or workers < 2:
        return out
    share = ps_loads(tensors, workers)
    where = np.repeat(nodes, gpus)  # the node of each worker, hence of each PS
    held = np.bincount(where, weights=share, minlength=n)
    w = np.bincount(where, minlength=n).astype(float)
    out += float(tensors.sum()) * w + held * (workers - 2 * w)
    return out


@dataclass(frozen=True)
class Placed:
    workers: IntArray  # per node
    ps_node: IntArray  # per PS
    load: float  # the most loaded node's traffic
    inside: float  # Σ_k s_k z_k: traffic kept inside nodes (the second level)
    status: Status
    gap: float | None
    solves: int


def added_load(
    w: IntArray, ps_node: IntArray, workers: int, share: FloatArray
) -> tuple[FloatArray, float]:
    """The job's traffic per node and the traffic kept inside nodes, for a placement (w
    workers per node, PS k with load share[k] on node ps_node[k])."""
    s_node = np.bincount(ps_node, weights=share, minlength=w.size)
    added = float(share.sum()) * w + workers * s_node - 2 * w * s_node
    return added, float((share * w[ps_node]).sum())


def greedy_workers(free: IntArray, load: FloatArray, count: int) -> IntArray:
    """`count` workers on the nodes with the most free GPUs, least loaded first among equals."""
    order = np.lexsort((load, -free))
    room = free[order]
    taken = np.minimum(room, np.maximum(count - np.cumsum(room) + room, 0))
    w = np.zeros(free.size, dtype=np.int64)
    w[order] = taken
    return w


def heaviest_bound(
    free: IntArray, load: FloatArray, workers: int, share: FloatArray
) -> tuple[float, list[tuple[int, int]]]:
    """The lower bound on L above, and the (node, workers) pairs in order of their bound."""
    floor = float(load.max(initial=0.0))
    if not share.size:
        return floor, []
    total, heaviest = float(share.sum()), float(share.max())
    nodes = np.flatnonzero(free > 0)
    c = np.arange(1, min(workers, int(free.max(initial=0))) + 1)
    ps = np.where(workers - 2 * c >= 0, heaviest, total)
    value = load[nodes, None] + total * c[None, :] + ps[None, :] * (workers - 2 * c[None, :])
    value = np.where(c[None, :] <= free[nodes, None], value, np.inf)
    flat = np.argsort(value, axis=None, kind="stable")
    rows, cols = np.unravel_index(flat[np.isfinite(value.ravel()[flat])], value.shape)
    pairs = list(zip(nodes[rows].tolist(), c[cols].tolist(), strict=True))
    return max(floor, float(value.min())), pairs


def _best_start(
    free: IntArray,
    load: FloatArray,
    workers: int,
    share: FloatArray,
    pairs: list[tuple[int, int]],
    tries: int = 8,
) -> _Search:
    """The best of the greedy placement and the greedy placements that put the heaviest PS
    with c workers on a node, for the `tries` best (node, c) pairs whose other nodes hold the
    rest of the gang."""
    found = []
    for node, c in [(-1, 0), *pairs[:tries]]:
        room = free.copy()
        fixed = np.zeros(free.size, dtype=np.int64)
        if node >= 0:
            fixed[node], room[node] = c, 0
        w = greedy_workers(room, load, workers - c) + fixed
        if w.sum() < workers:  # the other nodes cannot take the rest: a gang is whole or waits
            continue
        ps = _assign_ps(load, w, workers, share, heaviest_on=node)
        added, inside = added_load(w, ps, workers, share)
        peak = float((load + added).max(initial=0.0))
        found.append(_Search(w, ps, peak, inside, Status.OPTIMAL, None, 0))
    return min(found, key=lambda s: (s.load, -s.inside))


def _assign_ps(
    load: FloatArray, w: IntArray, workers: int, share: FloatArray, heaviest_on: int = -1
) -> IntArray:
    """PSs, heaviest first, each on the worker node whose traffic it raises least (the
    heaviest on `heaviest_on` when given)."""
    hosts = np.flatnonzero(w > 0)
    ps_node = np.zeros(share.size, dtype=np.int64)
    current = load + float(share.sum()) * w
    for rank, k in enumerate(np.argsort(-share, kind="stable").tolist()):
        if rank == 0 and heaviest_on >= 0:
            best = heaviest_on
        else:
            best = int(hosts[np.argmin(current[hosts] + share[k] * (workers - 2 * w[hosts]))])
        ps_node[k] = best
        current[best] += share[k] * (workers - 2 * w[best])
    return ps_node


def candidates(free: IntArray, load: FloatArray, workers: int) -> IntArray:
    """Nodes that can host workers and are dominated (at least their free GPUs, at most their
    load) by fewer than `workers` others, in a strict order that breaks ties by index."""
    able = np.flatnonzero(free > 0)
    f, t = free[able], load[able]
    idx = np.arange(able.size)
    better = (
        (f[None, :] >= f[:, None])
        & (t[None, :] <= t[:, None])
        & ((f[None, :] > f[:, None]) | (t[None, :] < t[:, None]) | (idx[None, :] < idx[:, None]))
    )
    kept: IntArray = able[better.sum(axis=1) < workers]
    return kept


@dataclass
class _Model:
    model: Model
    w: Block
    u: Block
    p: Block
    z: Block
    top: Block
    nodes: IntArray
    share: FloatArray


def worker_caps(
    free: IntArray, load: FloatArray, workers: int, total: float, cutoff: float
) -> IntArray:
    """The most workers each node can take without its traffic passing `cutoff` whatever PSs
    it hosts: c with t_n + M c + min(0, M (W − 2c)) ≤ cutoff."""
    c = np.arange(int(free.max(initial=0)) + 1)
    least = load[:, None] + total * c[None, :] + np.minimum(0.0, total * (workers - 2 * c))
    fits = (least <= cutoff) & (c[None, :] <= free[:, None])
    caps: IntArray = np.where(fits, c[None, :], 0).max(axis=1).astype(np.int64)
    return caps


def build(
    free: IntArray,
    load: FloatArray,
    workers: int,
    share: FloatArray,
    bound: float,
    cutoff: float,
) -> _Model:
    """The model on the nodes that can matter, each taking at most the workers it can without
    passing `cutoff` (no better placement does), with L between `bound` and `cutoff`."""
    free = worker_caps(free, load, workers, float(share.sum()), cutoff)
    nodes = candidates(free, load, workers)
    n, k = nodes.size, share.size
    f = free[nodes].astype(float)
    model = Model("network_load", Sense.MINIMIZE)
    w = model.add_variables("workers", n, upper=f, integer=True)
    u = model.add_variables("hosts", n, upper=1, integer=True)
    p = model.add_variables("ps", k * n, upper=1, integer=True)  # index k·n + node
    z = model.add_variables("ps_workers", k * n, upper=np.tile(np.minimum(f, workers), k))
    top = model.add_variables("max_load", 1, lower=bound, upper=max(bound, cutoff))
    eye = sp.identity(n, format="csr")
    per_ps = sp.kron(sp.identity(k), np.ones((1, n)), format="csr")  # Σ_n over each PS
    tile = sp.kron(np.ones((k, 1)), eye, format="csr")  # node n of every PS
    model.add_constraints("all_workers", {w: np.ones((1, n))}, lower=workers, upper=workers)
    model.add_constraints("hosts_up", {w: eye, u: -sp.diags(f)}, upper=0.0)
    model.add_constraints("hosts_down", {u: eye, w: -eye}, upper=0.0)
    model.add_constraints("one_host", {p: per_ps}, lower=1.0, upper=1.0)
    model.add_constraints("ps_on_hosts", {p: sp.identity(k * n), u: -tile}, upper=0.0)
    model.add_constraints("pairs_workers", {z: sp.identity(k * n), w: -tile}, upper=0.0)
    cap = np.tile(np.minimum(f, workers), k)
    model.add_constraints("pairs_ps", {z: sp.identity(k * n), p: -sp.diags(cap)}, upper=0.0)
    weight = np.repeat(share, n)
    node_of = sp.kron(np.ones((1, k)), eye, format="csr")  # Σ_k for each node
    model.add_constraints(
        "load",
        {
            w: sp.diags(np.full(n, float(share.sum()))),
            p: node_of.multiply(workers * weight[None, :]),
            z: node_of.multiply(-2.0 * weight[None, :]),
            top: -np.ones((n, 1)),
        },
        upper=-load[nodes],
    )
    return _Model(model, w, u, p, z, top, nodes, share)


def place(
    free: IntArray,
    load: FloatArray,
    workers: int,
    tensors: FloatArray,
    ctx: SolveContext,
    time_limit: float | None = None,
    tie_break: bool = True,
) -> Placed:
    """The job on the nodes' `free` GPUs given their `load`, both levels solved (the second
    only with `tie_break`), or the best found within `time_limit`. The caller guarantees
    Σ free ≥ workers."""
    share_all = ps_loads(tensors, workers)
    carried = np.flatnonzero(share_all > 0)
    share = share_all[carried]
    bound, pairs = heaviest_bound(free, load, workers, share)
    out = _best_start(free, load, workers, share, pairs)
    if share.size and ctx.budget.spent():
        out = _unproven(out, bound, float(share.sum() * min(workers, int(free.max()))), tie_break)
    elif share.size:
        out = _levels(free, load, workers, share, out, bound, ctx, time_limit, tie_break)
    ps_node = np.full(share_all.size, int(np.flatnonzero(out.w)[0]), dtype=np.int64)
    ps_node[carried] = out.ps
    return Placed(out.w, ps_node, out.load, out.inside, out.status, out.gap, out.solves)


@dataclass
class _Search:
    w: IntArray
    ps: IntArray  # node of each PS that carries load
    load: float
    inside: float
    status: Status
    gap: float | None
    solves: int


#: Each level is solved to this relative gap unless the request sets its own.
GAP = 1e-6


def _levels(
    free: IntArray,
    load: FloatArray,
    workers: int,
    share: FloatArray,
    out: _Search,
    bound: float,
    ctx: SolveContext,
    time_limit: float | None,
    tie_break: bool,
) -> _Search:
    if out.load > bound + GAP * max(bound, 1.0):
        m = build(free, load, workers, share, bound, out.load)
        m.model.set_objective({m.top: np.ones(1)}, Sense.MINIMIZE)
        out = _solve(m, out, load, workers, ctx, time_limit)
        if out.status is not Status.OPTIMAL:
            return out
    if not tie_break:
        return out
    ceiling = float(share.sum() * min(workers, int(free.max(initial=0))))
    if out.inside >= ceiling - GAP * max(ceiling, 1.0):
        return out  # every PS already sits with as many workers as a node holds
    m = build(free, load, workers, share, bound, out.load + GAP * max(out.load, 1.0))
    m.model.set_objective({m.z: np.repeat(share, m.nodes.size)}, Sense.MAXIMIZE)
    return _solve(m, out, load, workers, ctx, time_limit)


def _unproven(out: _Search, bound: float, ceiling: float, tie_break: bool) -> _Search:
    """The greedy placement when the time is up: optimal only where it meets the bounds."""
    short = out.load > bound + GAP * max(bound, 1.0)
    if tie_break:
        short = short or out.inside < ceiling - GAP * max(ceiling, 1.0)
    if not short:
        return out
    gap = relative_gap(bound, out.load, maximize=False)
    return _Search(out.w, out.ps, out.load, out.inside, Status.FEASIBLE, gap, out.solves)


def _solve(
    m: _Model,
    out: _Search,
    load: FloatArray,
    workers: int,
    ctx: SolveContext,
    time_limit: float | None,
) -> _Search:
    start = _start(m, out, workers)
    request = SolveRequest(m.model, mip_gap=GAP, start=start, time_limit=time_limit)
    solution = ctx.solve(request)
    solves = out.solves + 1
    if not solution.status.has_solution:
        status = Status.FALLBACK if out.solves == 0 else Status.FEASIBLE
        return _Search(out.w, out.ps, out.load, out.inside, status, None, solves)
    n = m.nodes.size
    w = np.zeros(load.size, dtype=np.int64)
    w[m.nodes] = np.round(solution.value(m.w)).astype(np.int64)
    chosen = solution.value(m.p).reshape(m.share.size, n).argmax(axis=1)
    ps = m.nodes[chosen]
    added, inside = added_load(w, ps, workers, m.share)
    peak = float((load + added).max(initial=0.0))
    return _Search(w, ps, peak, inside, solution.status, solution.mip_gap, solves)


def _start(m: _Model, out: _Search, workers: int) -> tuple[IntArray, FloatArray] | None:
    """The columns' values for a placement, or None when it uses a node the model left out
    (dominance keeps an optimum's nodes, not necessarily the incumbent's)."""
    n = m.nodes.size
    local = {int(node): i for i, node in enumerate(m.nodes)}
    w = out.w[m.nodes].astype(float)
    if w.sum() < workers or any(int(node) not in local for node in out.ps):
        return None
    p = np.zeros((m.share.size, n))
    p[np.arange(m.share.size), [local[int(node)] for node in out.ps]] = 1.0
    x = np.concatenate([w, (w > 0).astype(float), p.ravel(), (p * w[None, :]).ravel()])
    x = np.append(x, out.load)
    return np.arange(x.size, dtype=np.int64), x
