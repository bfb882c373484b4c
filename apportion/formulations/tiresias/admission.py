"""Exact admission under discretized priorities (FORMULATIONS §10b): who runs now, as a MILP.

Jobs j with gang g_j, queue q_j, rank r_j within it (n_q jobs in queue q); nodes n of type k(n)
with G_n GPUs (N_k per type); running jobs hold H_rn GPUs on node n. Variables:

    x_r ∈ {0,1}   running job r keeps its GPUs (never moved: it keeps them or stops)
    y_jk ∈ {0,1}  waiting job j starts on type k (not sensitive: any GPUs of the type will do)
    v_jk ∈ {0,1}  waiting sensitive job j starts on type k, on z_jn ∈ ℤ GPUs of nodes u_jn ∈ {0,1}

    type capacity   Σ_j g_j y_jk + Σ_{j, n∈k} z_jn + Σ_{r on k} g_r x_r ≤ N_k
    node capacity   Σ_j z_jn + Σ_r H_rn x_r ≤ G_n          (nodes a sensitive job may use)
    one start       Σ_k y_jk ≤ 1,  Σ_k v_jk ≤ 1
    whole gang      Σ_{n∈k} z_jn = g_j v_jk,   z_jn ≤ min(G_n, g_j) u_jn
    fewest nodes    Σ_{n∈k} u_jn ≤ m_jk v_jk    (m_jk: the fewest nodes of k holding g_j)
    preemption cap  Σ_r (1 − x_r) ≤ P           (optional)

Non-sensitive gangs only count GPUs: whatever the sensitive ones and the kept running jobs leave
can always be handed to them piece by piece, so the type rows are exact for them. With ρ_j the
job's run indicator (x_r, Σ_k y_jk or Σ_k v_jk), the objective is lexicographic, one level after
the other, each solved with the levels before it held at their optimum:

    1. for each queue q, top first: maximize N_q = Σ_{j∈q} ρ_j (the most of its jobs);
    2. minimize the preemption cost Σ_r c_r (1 − x_r), c_r = g_r × its checkpoint seconds;
    3. maximize the priority Σ_j (n_{q_j} − r_j) ρ_j.

A level whose optimum the starting point already reaches (every job of the queue runs, nothing
is preempted) is settled without a solve. Every coefficient is a whole number, and each level is
solved to a zero gap. Tiresias's greedy admission is the starting point.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from apportion.formulations.tiresias.greedy import Decision
from apportion.formulations.tiresias.instance import Instance
from apportion.solver.arraytypes import FloatArray, IntArray
from apportion.solver.model import Block, Model, Sense
from apportion.solver.sparse import sp


@dataclass
class Columns:
    """The model's blocks and what each column stands for."""

    model: Model
    keep: Block
    start: Block  # y
    sens: Block  # v
    pieces: Block  # z
    uses: Block  # u
    keep_job: IntArray
    start_job: IntArray
    start_type: IntArray
    sens_job: IntArray
    sens_type: IntArray
    piece_job: IntArray  # per z (and u) column: the job and the node
    piece_node: IntArray
    piece_of: IntArray  # per z column: its (job, type) row in the sens block
    runs: sp.csr_matrix  # (jobs × columns) ρ_j as a row per job

    def start_point(self, inst: Instance, decision: Decision) -> tuple[IntArray, FloatArray]:
        """The columns' values for a decision (greedy's, or a previous level's)."""
        x = np.zeros(self.model.num_cols)
        x[self.keep.span] = decision.kept[self.keep_job]
        chosen = {j: k for j, (k, _) in decision.started.items()}
        start = _pairs(self.start_job, self.start_type)
        x[self.start.span] = [chosen.get(j) == k for j, k in start]
        x[self.sens.span] = [chosen.get(j) == k for j, k in _pairs(self.sens_job, self.sens_type)]
        gpus = [
            decision.started.get(int(j), (-1, {}))[1].get(int(n), 0)
            for j, n in _pairs(self.piece_job, self.piece_node)
        ]
        x[self.pieces.span] = gpus
        x[self.uses.span] = np.asarray(gpus) > 0
        return np.arange(x.size, dtype=np.int64), x


def _pairs(a: IntArray, b: IntArray) -> list[tuple[int, int]]:
    return list(zip(a.tolist(), b.tolist(), strict=True))


def build(inst: Instance, jobs: IntArray, max_preemptions: int | None) -> Columns:
    """The admission model over `jobs` (schedulable ones), with no objective yet."""
    model = Model("tiresias_admission", Sense.MAXIMIZE)
    running = jobs[inst.running[jobs]]
    waiting = jobs[~inst.running[jobs]]
    plain = waiting[~inst.sensitive[waiting]]
    sens = waiting[inst.sensitive[waiting]]
    start_job, start_type = np.nonzero(inst.usable[plain])
    start_job = plain[start_job]
    sens_job, sens_type = np.nonzero(inst.usable[sens])
    sens_job = sens[sens_job]
    # One (z, u) pair per sensitive (job, type) row and node of that type.
    row_of, piece_node = np.nonzero(inst.node_type[None, :] == sens_type[:, None])
    piece_job = sens_job[row_of]
    keep = model.add_variables(
        "keep", running.size, upper=1, integer=True, coords=(("job", running.tolist()),)
    )
    start = model.add_variables("start", start_job.size, upper=1, integer=True)
    vsens = model.add_variables("start_consolidated", sens_job.size, upper=1, integer=True)
    cap = np.minimum(inst.node_gpus[piece_node], inst.gang[piece_job])
    pieces = model.add_variables("gpus", piece_job.size, upper=cap, integer=True)
    uses = model.add_variables("uses", piece_job.size, upper=1, integer=True)
    cols = Columns(
        model,
        keep,
        start,
        vsens,
        pieces,
        uses,
        running,
        start_job,
        start_type,
        sens_job,
        sens_type,
        piece_job,
        piece_node,
        row_of,
        _runs(inst, model, running, start_job, sens_job),
    )
    _capacity_rows(inst, cols)
    _gang_rows(inst, cols, cap)
    if max_preemptions is not None and running.size:
        least = running.size - max_preemptions
        model.add_constraints("preemption_cap", {keep: np.ones((1, running.size))}, lower=least)
    return cols


def _runs(
    inst: Instance, model: Model, running: IntArray, start_job: IntArray, sens_job: IntArray
) -> sp.csr_matrix:
    offsets = [b.start for b in model.variables[:3]]
    rows = np.concatenate([running, start_job, sens_job])
    cols = np.concatenate(
        [
            offsets[0] + np.arange(running.size),
            offsets[1] + np.arange(start_job.size),
            offsets[2] + np.arange(sens_job.size),
        ]
    )
    shape = (inst.num_jobs, model.num_cols)
    return sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=shape)


def _capacity_rows(inst: Instance, c: Columns) -> None:
    types = len(inst.type_names)
    run_type = inst.run_type[c.keep_job]
    piece_type = inst.node_type[c.piece_node]

    def incidence(kind: IntArray, weight: FloatArray) -> sp.csr_matrix:
        return sp.csr_matrix((weight, (kind, np.arange(kind.size))), shape=(types, kind.size))

    c.model.add_constraints(
        "type_capacity",
        {
            c.keep: incidence(run_type, inst.gang[c.keep_job].astype(float)),
            c.start: incidence(c.start_type, inst.gang[c.start_job].astype(float)),
            c.pieces: incidence(piece_type, np.ones(piece_type.size)),
        },
        upper=inst.type_gpus.astype(float),
        coords=(("type", inst.type_names),),
    )
    nodes = np.unique(c.piece_node)
    if not nodes.size:
        return
    local = np.searchsorted(nodes, c.piece_node)
    held = inst.held[c.keep_job][:, nodes].T  # (nodes × kept running jobs)
    c.model.add_constraints(
        "node_capacity",
        {
            c.pieces: sp.csr_matrix(
                (np.ones(local.size), (local, np.arange(local.size))),
                shape=(nodes.size, local.size),
            ),
            c.keep: sp.csr_matrix(held, dtype=float),
        },
        upper=inst.node_gpus[nodes].astype(float),
        coords=(("node", [inst.node_ids[n] for n in nodes]),),
    )


def _gang_rows(inst: Instance, c: Columns, cap: IntArray) -> None:
    model = c.model
    if c.start_job.size:
        jobs, where = np.unique(c.start_job, return_inverse=True)
        model.add_constraints(
            "one_start",
            {c.start: sp.csr_matrix((np.ones(where.size), (where, np.arange(where.size))))},
            upper=1.0,
        )
    if not c.sens_job.size:
        return
    jobs, where = np.unique(c.sens_job, return_inverse=True)
    rows = c.sens_job.size
    model.add_constraints(
        "one_consolidated_start",
        {c.sens: sp.csr_matrix((np.ones(rows), (where, np.arange(rows))), shape=(jobs.size, rows))},
        upper=1.0,
    )
    pieces = c.piece_job.size
    member = sp.csr_matrix((np.ones(pieces), (c.piece_of, np.arange(pieces))), shape=(rows, pieces))
    model.add_constraints(
        "whole_gang",
        {c.pieces: member, c.sens: -sp.diags(inst.gang[c.sens_job].astype(float))},
        lower=0.0,
        upper=0.0,
    )
    fewest = inst.fewest[c.sens_job, c.sens_type].astype(float)
    model.add_constraints("fewest_nodes", {c.uses: member, c.sens: -sp.diags(fewest)}, upper=0.0)
    model.add_constraints(
        "piece_uses_node",
        {c.pieces: sp.identity(pieces, format="csr"), c.uses: -sp.diags(cap.astype(float))},
        upper=0.0,
    )
