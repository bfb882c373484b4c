"""What a unit of contention loss costs in the schedule objective, per choice of a job.

A job j running with choice o loses ℓ_j of its throughput to its worst co-runner. Its price:

    flat:      c_o = W1 · g_j
    progress:  c_o = W1 · g_j + W2 · π_j · g_j · σ_o

Under `flat` (DeepShare's penalty alone) contention is traded only against the lowest
level's GPUs: a job of a higher level runs however much it and its neighbours lose. Under
`progress` the W2 part is the progress the loss takes, at the job's own priority: the value
term W2 π_j g_j σ_o less it is W2 π_j g_j σ_o (1 − ℓ_j), the job's priority-weighted progress.
Starting a job then pays only when its own progress outweighs what it takes from its
co-runners at their priorities, and W1 keeps DeepShare's extra price on contention.

The price is kept as a factor times units, c_o = f · u_o (flat: f = W1, u_o = g_j; progress:
f = 1, u_o = c_o), so the flat objective is computed as it always was and the greedy can rank
nodes by units where W1 = 0 prices nothing.
"""

from __future__ import annotations

from apportion.formulations.placement.schedule.instance import ScheduleInstance
from apportion.solver.arraytypes import FloatArray


def progress_valued(inst: ScheduleInstance) -> bool:
    return inst.contention_value == "progress"


def loss_units(inst: ScheduleInstance, w1: float) -> tuple[float, FloatArray]:
    """(f, u_o for every choice o): c_o = f · u_o (module docstring)."""
    ch = inst.choices
    g = inst.demand[ch.job].astype(float)
    if not progress_valued(inst):
        return w1, g
    units: FloatArray = w1 * g + (1.0 - w1) * inst.weight[ch.job] * g * ch.speed
    return 1.0, units


def loss_price(inst: ScheduleInstance, w1: float) -> FloatArray:
    """c_o for every choice o."""
    factor, units = loss_units(inst, w1)
    price: FloatArray = factor * units
    return price
