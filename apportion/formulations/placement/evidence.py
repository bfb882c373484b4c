"""What the placement hands the explanation builder (`solver.explain`, docs/EXPLANATIONS.md):
one reason per job, read from the placement and the data, with the number behind it.

- `granted`: running or started without contention (CS 1);
- `contention_penalty`: running or started next to a job that slows it down (its CS, the worst
  co-runner);
- `gang_does_not_fit`: no allowed shape places its GPUs on these nodes, even idle;
- `capacity`: no allowed shape fits the free GPUs, before the decision or after the jobs started
  now (the free GPUs then);
- `lower_value`: it fits, but starting it lowers the objective (the change when it starts where
  the greedy start would put it, scored exactly). When the placement is not proven optimal and
  that start would raise the objective, the job is `not_explained`: the search ran out of time.

A job with no positive throughput on any GPU type gets `no_throughput`.
"""

from __future__ import annotations

from apportion.formulations.placement.evaluate import Evaluation, evaluate
from apportion.formulations.placement.greedy import single_starts
from apportion.formulations.placement.instance import Instance, Started
from apportion.formulations.placement.options import ContentionPlacementOptions
from apportion.solver.arraytypes import IntArray
from apportion.solver.explain.codes import Reason
from apportion.solver.policy import DecisionEvidence
from apportion.solver.status import Status

Detail = dict[str, float | int | str | bool | None]

NOTE = "reasons read from the placement and the contention table, not from duals"


def decision_evidence(
    inst: Instance,
    options: ContentionPlacementOptions,
    status: Status,
    evaluation: Evaluation,
    started: Started,
) -> DecisionEvidence:
    """A reason for every job of the snapshot (the placement policy's data reasons are its
    own: a placement snapshot gives throughputs only to restrict GPU types)."""
    codes: dict[int, str] = {}
    texts: dict[int, str] = {}
    detail: dict[int, Detail] = {}
    held = set(evaluation.placements)
    for j in held:
        codes[j], texts[j], detail[j] = _held(inst, evaluation, j, j in started)
    residual = inst.free.copy()
    for o, nodes in started.values():
        residual[nodes] -= inst.options.per_node[o]
    fitting = []
    for position, j in enumerate(inst.candidates.tolist()):
        if j in held:
            continue
        if j in inst.runs_nowhere:
            codes[j], texts[j] = Reason.NO_THROUGHPUT, inst.reasons[j]
        elif j in inst.too_wide:
            codes[j], texts[j] = Reason.GANG_DOES_NOT_FIT, inst.reasons[j]
            detail[j] = {"gpus": int(inst.demand[position]), "largest_node": _largest(inst)}
        elif _fits(inst, position, residual):
            fitting.append(position)
        else:
            codes[j], texts[j], detail[j] = _refused(inst, position, residual, j in inst.reasons)
    _not_started(inst, options, status, evaluation, started, fitting, (codes, texts, detail))
    return DecisionEvidence(codes, texts, detail=detail, note=NOTE)


def _held(inst: Instance, ev: Evaluation, j: int, started: bool) -> tuple[str, str, Detail]:
    state = "started" if started else "running"
    nodes = ", ".join(sorted(ev.placements[j]))
    cs = float(ev.cs[j])
    detail: Detail = {"state": state, "nodes": nodes, "cs": cs}
    if cs <= 1.0:
        return Reason.GRANTED, f"{state} on {nodes}, no contention", detail
    detail |= {
        "throughput_ratio": 1.0 / cs,
        "worst_co_runner": ev.worst_co_runner[j],
        "cs_source": ev.source[j],
    }
    text = f"{state} on {nodes}, slowed by {ev.worst_co_runner[j]}: CS {cs:.3g}"
    return Reason.CONTENTION_PENALTY, text, detail


def _largest(inst: Instance) -> int:
    return int(inst.node_gpus.max(initial=0))


def _fits(inst: Instance, position: int, residual: IntArray) -> bool:
    """Whether some start of the candidate fits the GPUs left free by the placement."""
    opts = inst.options
    return any(
        ((inst.node_type == opts.gpu_type[o]) & (residual >= opts.per_node[o])).sum()
        >= opts.nodes[o]
        for o in inst.options_of(position).tolist()
    )


def _refused(
    inst: Instance, position: int, residual: IntArray, before: bool
) -> tuple[str, str, Detail]:
    """`capacity`: the free GPUs, before the decision (`before`) or after it."""
    free = inst.free if before else residual
    gpus = int(inst.demand[position])
    when = "free" if before else "left free by the jobs started now"
    text = (
        f"needs {gpus} GPUs in an allowed shape: {int(free.sum())} {when}, "
        f"at most {int(free.max(initial=0))} on a node"
    )
    detail: Detail = {
        "gpus": gpus,
        "free_gpus": int(free.sum()),
        "largest_free_node": int(free.max(initial=0)),
        "taken_by_started": not before,
    }
    return Reason.CAPACITY, text, detail


def _not_started(
    inst: Instance,
    options: ContentionPlacementOptions,
    status: Status,
    evaluation: Evaluation,
    started: Started,
    fitting: list[int],
    out: tuple[dict[int, str], dict[int, str], dict[int, Detail]],
) -> None:
    """`lower_value` for candidates that fit but wait: the exact change of the objective if it
    starts where the greedy start would put it."""
    codes, texts, detail = out
    moves = single_starts(inst, started, options.w1, options.penalty, fitting)
    for j, move in moves.items():
        value = evaluate(inst, {**started, j: move}, options.w1, options.penalty).objective
        change = value - evaluation.objective
        nodes = ", ".join(inst.node_ids[n] for n in move[1])
        detail[j] = {"objective_change": change, "nodes": nodes}
        if change <= 0 or status is Status.OPTIMAL:
            codes[j] = Reason.LOWER_VALUE
            texts[j] = f"starting it on {nodes} would change the objective by {change:+.3g}"
        else:
            codes[j] = Reason.NOT_EXPLAINED
            texts[j] = (
                f"not started in the best placement found within the limits; starting it on "
                f"{nodes} would change the objective by {change:+.3g}"
            )
