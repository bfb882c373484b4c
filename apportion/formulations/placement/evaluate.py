"""Score a placement directly from its definition, independent of any model's variables.

The policy reports these numbers (not the solver's), and compares them with the solver's
objective: a disagreement would mean the model and the definition drifted apart.

For a running or started job a with configuration α_a on nodes N_a, its co-runners are the other
jobs holding GPUs on a node of N_a;
    worst:     CS_a = max(1, max_b CS(α_a | α_b))
    additive:  CS_a = 1 + Σ_b (CS(α_a | α_b) − 1)
    utilization U = GPUs held by running and started jobs / GPUs of the cluster
    contention Φ = (Σ_running+started CS_a + #waiting) / #jobs   (a waiting job counts 1)
    objective  = W2 · U − W1 · Φ
and with the reference objective (`reference`), DeepShare's reward:
    loss μ = mean over running and started jobs of 1 − 1/CS_a   (0 when no job holds GPUs)
    objective  = W2 · U − W1 · μ
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from apportion.formulations.placement.instance import Instance, Started
from apportion.solver.arraytypes import FloatArray


@dataclass
class Evaluation:
    placements: dict[int, dict[str, int]]
    cs: FloatArray  # per job, NaN for waiting jobs
    worst_co_runner: list[str | None]
    source: list[str | None]
    utilization: float
    gpus_used: int
    contention: float  # Φ
    mean_cs_running: float | None  # DeepShare's metric: over running and started jobs only
    mean_loss: float | None  # mean of 1 − 1/CS over the same jobs (the reference objective's)
    objective: float
    utilization_term: float
    contention_term: float
    sources: Counter[str] = field(default_factory=Counter)


Held = dict[int, tuple[int, dict[int, int]]]  # job → (config, {node: GPUs})


def _held(instance: Instance, started: Started) -> Held:
    """Every job holding GPUs: running ones where they run, started ones where they start."""
    held: Held = {}
    for r, j in enumerate(instance.running):
        nodes = instance.running_nodes[r].tolist()
        gpus = instance.running_gpus[r].tolist()
        held[int(j)] = (int(instance.running_config[r]), dict(zip(nodes, gpus, strict=True)))
    opts = instance.options
    for j, (o, nodes) in started.items():
        held[j] = (int(opts.config[o]), dict.fromkeys(nodes, int(opts.per_node[o])))
    return held


def evaluate(
    instance: Instance,
    started: Started,
    w1: float,
    penalty: str,
) -> Evaluation:
    """`started` maps a candidate's job index to (option index, node indices)."""
    held = _held(instance, started)
    on_node: dict[int, list[int]] = {}
    for j, (_, nodes_of) in held.items():
        for n in nodes_of:
            on_node.setdefault(n, []).append(j)

    m = instance.num_jobs
    cs = np.full(m, np.nan)
    worst: list[str | None] = [None] * m
    source: list[str | None] = [None] * m
    sources: Counter[str] = Counter()
    for j, (alpha, nodes_of) in held.items():
        others = sorted({b for n in nodes_of for b in on_node[n]} - {j})
        value, top, top_value = 1.0, None, 1.0
        for b in others:
            found = instance.source(alpha, held[b][0])
            sources[found.source.value] += 1
            if penalty == "additive":
                value += found.cs - 1.0
            else:
                value = max(value, found.cs)
            if found.cs > top_value:
                top, top_value = b, found.cs
        cs[j] = value
        if top is not None:
            worst[j] = instance.job_ids[top]
            source[j] = instance.source(alpha, held[top][0]).source.value

    used = sum(sum(nodes_of.values()) for _, nodes_of in held.values())
    utilization = used / instance.total_gpus if instance.total_gpus else 0.0
    contention = (float(np.nansum(cs)) + (m - len(held))) / m if m else 1.0
    mean_loss = float(np.nanmean(1.0 - 1.0 / cs)) if held else None
    penalty_term = w1 * ((mean_loss or 0.0) if instance.reference else contention)
    w2 = 1.0 - w1
    placements = {
        j: {instance.node_ids[n]: g for n, g in nodes_of.items()}
        for j, (_, nodes_of) in held.items()
    }
    return Evaluation(
        placements=placements,
        cs=cs,
        worst_co_runner=worst,
        source=source,
        utilization=utilization,
        gpus_used=int(used),
        contention=contention,
        mean_cs_running=float(np.nanmean(cs)) if held else None,
        mean_loss=mean_loss,
        objective=w2 * utilization - penalty_term,
        utilization_term=w2 * utilization,
        contention_term=penalty_term,
        sources=sources,
    )
