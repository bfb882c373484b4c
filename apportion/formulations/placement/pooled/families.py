"""Families: what the pooled model counts instead of candidates.

A family f = (group g of m_g interchangeable candidates, shape k_f × p_f, GPU type); its
(family, node) pairs are the eligible nodes n (right type, at least p_f free GPUs), each able to
hold b_fn = min(m_g, ⌊F_n / p_f⌋) of the family's pieces.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from apportion.formulations.placement.instance import Instance
from apportion.solver.arraytypes import IntArray


@dataclass
class Families:
    """Families and their (family, node) pairs, with the option row each family starts with."""

    option: IntArray  # a representative option row (k, p, type, config of the family)
    group: IntArray
    nodes: IntArray  # k
    per_node: IntArray  # p
    config: IntArray
    demand: IntArray
    size: IntArray  # m_g
    pair_family: IntArray
    pair_node: IntArray
    pair_upper: IntArray  # b_fn

    @property
    def count(self) -> int:
        return int(self.option.size)

    @cached_property
    def pairs_of(self) -> list[IntArray]:
        """Each family's (family, node) pair indices, ascending: the rows read them per level."""
        cuts = np.searchsorted(self.pair_family, np.arange(1, self.count))
        return np.split(np.arange(self.pair_family.size), cuts)


def families(inst: Instance) -> Families:
    """The instance's families (one per distinct group, shape and GPU type of its options) and
    their eligible nodes."""
    opts = inst.options
    group = inst.group[opts.candidate]
    keys = np.stack([group, opts.nodes, opts.per_node, opts.gpu_type])
    _, first = np.unique(keys, axis=1, return_index=True)
    option = np.sort(first)
    size = np.bincount(inst.group)[group[option]]
    eligible = (inst.node_type[None, :] == opts.gpu_type[option][:, None]) & (
        inst.free[None, :] >= opts.per_node[option][:, None]
    )
    pair_family, pair_node = np.nonzero(eligible)
    upper = np.minimum(
        size[pair_family], inst.free[pair_node] // opts.per_node[option][pair_family]
    )
    return Families(
        option=option,
        group=group[option],
        nodes=opts.nodes[option],
        per_node=opts.per_node[option],
        config=opts.config[option],
        demand=inst.demand[opts.candidate[option]],
        size=size,
        pair_family=pair_family,
        pair_node=pair_node,
        pair_upper=upper,
    )
