"""DeepShare's own reward as the objective (`objective = "reference"`, FORMULATIONS §7):

    maximize  W2 · U − W1 · μ,   μ = Σ_held (1 − 1/CS_j) / |held|

the mean throughput lost to contention over the jobs holding GPUs (running and started; 0 when
none does). Under the worst-co-runner penalty 1 − 1/CS_j = max(0, max_b (1 − 1/CS(α_j | α_b))),
since 1 − 1/x increases: the models price it unchanged on the table CS' = 2 − 1/CS (`priced`),
their c_j − 1 being the job's loss. So N(x) = Σ_held (c_j − 1) is linear in the model's variables,
and so is D(x) = R + S(x), R running jobs and S = Σ_o v_o started ones; μ = N/D is their ratio.

The whole objective is not a ratio of linear functions: W2·U − W1·N/D = (W2·U·D − W1·N)/D, and
U·D multiplies starts by starts, so Dinkelbach's parametric problem max (W2·U·D − W1·N − λD)
would be a quadratic MILP at every iteration. Instead μ·D is linearized exactly. S is an integer
in [0, K] (K candidates), written in L = ⌈log2(K + 1)⌉ binary digits:

    S = Σ_i 2^i b_i,  b_i ∈ {0, 1}
    N(x) ≤ μ R + Σ_i 2^i q_i                     (μ ≥ N/D)
    q_i ≤ μ,  q_i ≤ μ̄ b_i,  q_i ≥ 0              (q_i ≤ μ b_i, tight for binary b_i)
    0 ≤ μ ≤ μ̄ = max CS' − 1

For integral placements the digits are S's and q_i = μ b_i can be reached, so the smallest
feasible μ is N/D (and 0 with D = 0, where N = 0): one MILP of the same kind as the linear
objective's, with 2L + 1 more columns, whose optimality certificate is the MILP's own gap.
Leaving candidate-pair rows out only lowers N, so the lazy rounds keep bounding from above.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp

from apportion.formulations.placement.evaluate import evaluate
from apportion.formulations.placement.instance import Instance, Started
from apportion.solver.arraytypes import FloatArray, IntArray
from apportion.solver.model import Block, Model


@dataclass
class MeanLoss:
    """The blocks of the rows below: μ, the digits b of S and the products q."""

    mean: Block
    bits: Block
    product: Block


def priced(inst: Instance) -> Instance:
    """The instance whose models price the reference objective: CS' = 2 − 1/CS everywhere the
    models read CS (the evaluator keeps reading the table's own values)."""
    return replace(inst, cs=2.0 - 1.0 / inst.cs, reference=True)


def add_mean_loss(
    model: Model,
    inst: Instance,
    excess: dict[Block, FloatArray],
    excess_constant: float,
    starts: Block,
) -> MeanLoss | None:
    """The rows of the module docstring for N = Σ_b excess[b]·b + excess_constant and
    S = Σ starts (None when no pair costs anything: μ = 0)."""
    top = float(inst.cs.max(initial=1.0)) - 1.0
    if top <= 0:
        return None
    digits = max(1, int(inst.candidates.size).bit_length())
    weight = 2.0 ** np.arange(digits)
    mean = model.add_variables("mean_loss", 1, upper=top)
    bits = model.add_variables("started_bits", digits, upper=1.0, integer=True)
    product = model.add_variables("mean_loss_bits", digits, upper=top)
    terms: dict[Block, sp.csr_matrix | FloatArray] = {
        block: coefficients[None, :] for block, coefficients in excess.items() if block.size
    }
    model.add_constraints(
        "mean_loss",
        {
            **terms,
            mean: np.array([[-float(inst.running.size)]]),
            product: -weight[None, :],
        },
        upper=-excess_constant,
    )
    eye = sp.identity(digits, format="csr")
    model.add_constraints(
        "mean_loss_bits",
        {product: eye, mean: -np.ones((digits, 1))},
        upper=0.0,
    )
    model.add_constraints("mean_loss_digit", {product: eye, bits: -top * eye}, upper=0.0)
    model.add_constraints(
        "started_count",
        {bits: weight[None, :], starts: -np.ones((1, starts.size))},
        lower=0.0,
        upper=0.0,
    )
    return MeanLoss(mean, bits, product)


def loss_start(inst: Instance, loss: MeanLoss, started: Started) -> tuple[IntArray, FloatArray]:
    """μ, b and q at `started`: μ its true mean loss (feasible: the models' N never exceeds
    the true one), b the digits of its starts, q = μ·b. A complete start needs no search to
    finish it."""
    mean = evaluate(inst, started, 1.0, "worst").mean_loss or 0.0
    bits = ((len(started) >> np.arange(loss.bits.size)) & 1).astype(float)
    index = np.concatenate(
        [np.arange(b.start, b.start + b.size) for b in (loss.mean, loss.bits, loss.product)]
    )
    return index.astype(np.int64), np.concatenate([[mean], bits, mean * bits])
