"""What a job loses each time it starts on GPUs: one overhead model for every enactment mode.

A job that starts on GPUs it did not hold in the previous round or lease (a move, a resume after
preemption, and with `first_start` its very first start) makes no progress for

    o(g) = base + per_doubling · log2 g   seconds      (g: the job's GPUs)

and nothing when its round or lease is extended on the same GPUs. Two models are named:

- `fixed`: o = `preemption_seconds` for every job, first starts free (Gavel's and DeepShare's
  simulators);
- `chronus`: Chronus's simulator, which charges every resume, the first start included,
  (checkpoint 0.1 + resume 0.4) · (1 + log2 g) minutes: 30 + 30 log2 g seconds.

The lease policies are told each job's o(g) (`overhead_seconds` in their snapshot), so they
count it in every lease they plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the configuration imports this module: it stays free of numpy
    from apportion.solver.arraytypes import FloatArray, IntArray

#: Chronus's simulator (`CHECKPOINT_OVER_HEAD + RESUME_OVER_HEAD` minutes per resume, times
#: 1 + log2 of the job's GPUs).
CHRONUS_MINUTES = 0.1 + 0.4
MODELS = ("fixed", "chronus")


@dataclass(frozen=True)
class Overhead:
    """o(g) = base + per_doubling · log2 g seconds per (re)start; `first_start`: the first
    start pays it too."""

    base: float = 0.0
    per_doubling: float = 0.0
    first_start: bool = False

    def __post_init__(self) -> None:
        if self.base < 0 or self.per_doubling < 0:
            raise ValueError("overhead seconds must be ≥ 0")

    @classmethod
    def named(cls, model: str, preemption_seconds: float = 0.0) -> Overhead:
        """`fixed` (`preemption_seconds` per move) or `chronus`; ValueError naming the choices."""
        if model == "fixed":
            return cls(preemption_seconds)
        if model == "chronus":
            per = 60.0 * CHRONUS_MINUTES
            return cls(per, per, first_start=True)
        raise ValueError(f"overhead: unknown model {model!r}; use one of {', '.join(MODELS)}")

    def seconds(self, gpus: IntArray) -> FloatArray:
        """o(g) per job of `gpus` GPUs."""
        import numpy as np

        g = np.maximum(np.asarray(gpus, dtype=float), 1.0)
        out: FloatArray = self.base + self.per_doubling * np.log2(g)
        return out
