"""Rows for the running jobs' side of worst-co-runner contention (see `worst`).

Running jobs never move, so what they impose is constant: R_αn, the worst CS a job of
configuration α suffers from the running jobs on node n, and K_r, what running job r suffers from
its running co-runners. What candidates do to running jobs is priced by three rows per running
job (exact per configuration, a GPU-weighted mean per node, and a per-candidate "touch" over all
of r's nodes) so that the relaxation cannot spread a job thinly to hide the damage.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from apportion.formulations.placement.indexed import Indexed
from apportion.formulations.placement.instance import Instance
from apportion.formulations.placement.model import Placement, matrix
from apportion.solver.arraytypes import FloatArray, IntArray
from apportion.solver.model import Block, Model, Take


def running_floor(inst: Instance) -> FloatArray:
    """K_r per running job: its worst running co-runner (1 if none)."""
    floor = np.ones(inst.running.size)
    by_node: dict[int, list[int]] = {}
    for r, nodes in enumerate(inst.running_nodes):
        for n in nodes.tolist():
            by_node.setdefault(n, []).append(r)
    for r, nodes in enumerate(inst.running_nodes):
        others = {q for n in nodes.tolist() for q in by_node[n]} - {r}
        cs = inst.cs[inst.running_config[r], inst.running_config[list(others)]]
        floor[r] = max(1.0, float(cs.max(initial=1.0)))
    return floor


def running_pieces(inst: Instance) -> tuple[IntArray, IntArray]:
    """(running job position, node) for every node a running job holds."""
    sizes = [nodes.size for nodes in inst.running_nodes]
    job = np.repeat(np.arange(inst.running.size), sizes).astype(np.int64)
    node = np.concatenate(inst.running_nodes) if sizes else np.zeros(0, np.int64)
    return job, node.astype(np.int64)


def running_worst(inst: Instance) -> FloatArray:
    """R_αn: the worst CS config α suffers from the running jobs on node n (configs × nodes)."""
    worst = np.ones((len(inst.configs), len(inst.node_ids)))
    for r, nodes in enumerate(inst.running_nodes):
        column = inst.cs[:, inst.running_config[r]]
        worst[:, nodes] = np.maximum(worst[:, nodes], column[:, None])
    return worst


def running_rows(
    model: Model,
    inst: Instance,
    pl: Placement,
    h: Indexed,
    hurt: tuple[IntArray, IntArray],
    pieces: tuple[IntArray, IntArray],
    floor: FloatArray,
    spread: FloatArray,
) -> tuple[Block, NDArray[np.bool_]]:
    """Running job r on node n:
        c_r ≥ K_r + (CS(α_r|β) − K_r) h_βn                 (exact max, nodes with room for two)
        c_r ≥ K_r + Σ_o (CS(α_r|α_o) − K_r)⁺ s_on w_on      (s = 1 where one piece fits: exact;
                                                             else p_o / F_n: the pieces' GPU-
                                                             weighted mean, at most their max)
    The second row is what keeps the relaxation from diluting damage over many fractional
    pieces. Returns the c block and which running jobs have one (the rest keep K_r)."""
    piece = hurt[0]
    r_job = pieces[0]
    couple_piece, couple_pair, excess = _couples(inst, pl, pieces, floor)
    used = np.unique(np.concatenate([r_job[piece], r_job[couple_piece]]))
    has = np.zeros(inst.running.size, bool)
    has[used] = True
    labels = [inst.job_ids[j] for j in inst.running]
    c = model.add_variables(
        "cs_running", used.size, lower=floor[used], coords=(("job", Take(labels, used)),)
    )
    if piece.size:
        _exact_rows(model, inst, h, c, used, hurt, pieces, floor)
    if couple_piece.size:
        rows_of, row = np.unique(couple_piece, return_inverse=True)
        job = r_job[rows_of]
        model.add_constraints(
            "cs_running_sum",
            {
                c: matrix(
                    np.arange(rows_of.size), np.searchsorted(used, job), 1.0, (rows_of.size, c.size)
                ),
                pl.w: matrix(
                    row.reshape(-1),
                    couple_pair,
                    -excess * spread[couple_pair],
                    (rows_of.size, pl.num_pairs),
                ),
            },
            lower=floor[job],
        )
        _touch_rows(model, inst, pl, c, used, r_job[couple_piece], couple_pair, excess, floor)
    return c, has


def _exact_rows(
    model: Model,
    inst: Instance,
    h: Indexed,
    c: Block,
    used: IntArray,
    hurt: tuple[IntArray, IntArray],
    pieces: tuple[IntArray, IntArray],
    floor: FloatArray,
) -> None:
    """c_r ≥ K_r + (CS(α_r|β) − K_r) h_βn for each running piece and configuration β that
    raises what its job suffers."""
    piece, beta = hurt
    r_job, r_node = pieces
    job = r_job[piece]
    rows = np.arange(piece.size)
    gain = inst.cs[inst.running_config[job], beta] - floor[job]
    model.add_constraints(
        "cs_running",
        {
            c: matrix(rows, np.searchsorted(used, job), 1.0, (rows.size, c.size)),
            h.block: matrix(rows, h.index[beta, r_node[piece]], -gain, (rows.size, h.block.size)),
        },
        lower=floor[job],
    )


def _couples(
    inst: Instance, pl: Placement, pieces: tuple[IntArray, IntArray], floor: FloatArray
) -> tuple[IntArray, IntArray, FloatArray]:
    """(running piece, pair) couples on the same node where the pair's configuration raises
    what the piece's job suffers, with CS(α_r|α_o) − K_r."""
    r_job, r_node = pieces
    cfg, node = inst.options.config[pl.pair_option], pl.pair_node
    by_node = [np.flatnonzero(node == n) for n in range(len(inst.node_ids))]
    couple_piece = np.repeat(np.arange(r_job.size), [by_node[n].size for n in r_node.tolist()])
    couple_pair = (
        np.concatenate([by_node[n] for n in r_node.tolist()]) if r_job.size else np.zeros(0, int)
    )
    job = r_job[couple_piece]
    excess = inst.cs[inst.running_config[job], cfg[couple_pair]] - floor[job]
    keep = excess > 0
    return couple_piece[keep], couple_pair[keep], excess[keep]


def _touch_rows(
    model: Model,
    inst: Instance,
    pl: Placement,
    c: Block,
    used: IntArray,
    job: IntArray,
    pair: IntArray,
    excess: FloatArray,
    floor: FloatArray,
) -> None:
    """c_r ≥ K_r + (CS(α_r|α_o) − K_r) · Σ_{n∈nodes(r)} w_on / min(k_o, |nodes(r)|) per running
    job r and option o: the sum over r's nodes is at most that minimum, and positive exactly when
    the job touches r, so spreading a job thinly over r's nodes no longer hides the damage."""
    option = pl.pair_option[pair]
    keys, row = np.unique(np.stack([job, option]), axis=1, return_inverse=True)
    row = row.reshape(-1)
    spans = np.array([inst.running_nodes[r].size for r in keys[0].tolist()])
    share = np.minimum(inst.options.nodes[keys[1]], spans).astype(float)
    count = keys.shape[1]
    model.add_constraints(
        "cs_running_touch",
        {
            c: matrix(np.arange(count), np.searchsorted(used, keys[0]), 1.0, (count, c.size)),
            pl.w: matrix(row, pair, -excess / share[row], (count, pl.num_pairs)),
        },
        lower=floor[keys[0]],
    )
