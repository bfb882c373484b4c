"""The multiple-choice model every elastic policy solves (FORMULATIONS §9b).

Over classes g of n_g identical jobs (`classes`) and their candidates c (GPU type k_c, g_c GPUs),
y_gc counts the members that run in c (integer for one configuration per job, continuous for
time shares):

    Σ_c y_gc ≤ n_g                        ∀g   (`choose`: a job runs in one configuration, or waits)
    Σ_{g, c: k_c = k} g_c y_gc ≤ N'_k     ∀k   (`capacity`: N'_k = N_k less the pinned jobs' GPUs)
    0 ≤ y_gc ≤ n_g

Each policy adds its objective (and rows). HiGHS solves these models fastest with presolve off:
every instance we measured closes at the root, where presolve only adds time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from apportion.formulations.elastic.candidates import ElasticJobs
from apportion.formulations.elastic.classes import Classes
from apportion.solver.arraytypes import FloatArray, IntArray
from apportion.solver.backends import Scalar, Solution
from apportion.solver.model import Block, Model
from apportion.solver.sparse import sp

#: `auto`: the setting measured best on these models, per backend (HiGHS: presolve off; it
#: spends more than the whole solve on a model that closes at the root); `on`/`off` force it.
Presolve = Literal["auto", "on", "off"]
#: What `auto` means per backend. Search settings only: they never change what counts as optimal.
AUTO_PRESOLVE = {"highs": "off"}


def tuning(presolve: Presolve) -> dict[str, dict[str, Scalar]]:
    """The per-backend settings for `presolve` (each backend reads its own entry)."""
    if presolve == "auto":
        return {name: {"presolve": value} for name, value in AUTO_PRESOLVE.items()}
    return {"highs": {"presolve": presolve}}


#: Time shares below this are solver round-off, not time given.
SHARE_FLOOR = 1e-9


@dataclass
class ChoiceModel:
    model: Model
    y: Block  # one column per class candidate, in `classes.column` order
    choose: Block
    capacity: Block
    classes: Classes
    jobs: ElasticJobs
    free: FloatArray  # N'_k: GPUs per type left by the pinned jobs
    tuning: dict[str, dict[str, Scalar]]

    def gpus(self) -> FloatArray:
        """g_c of each column."""
        return self.jobs.candidates.gpus[self.classes.column].astype(float)


def pinned_use(jobs: ElasticJobs, num_types: int) -> FloatArray:
    """GPUs per type held by pinned jobs (each keeps its one candidate)."""
    c = jobs.candidates
    held = jobs.pinned[c.job]
    return np.bincount(c.gpu[held], weights=c.gpus[held], minlength=num_types).astype(float)


def build(
    name: str,
    jobs: ElasticJobs,
    classes: Classes,
    gpu_count: FloatArray,
    gpu_names: list[str],
    job_ids: list[str],
    integral: bool,
    presolve: Presolve = "auto",
) -> ChoiceModel:
    """The rows above over `classes` (pinned jobs excluded by the caller)."""
    c = jobs.candidates
    col = classes.column
    free = np.maximum(gpu_count - pinned_use(jobs, gpu_count.size), 0.0)
    labels = [job_ids[j] for j in classes.representative()]
    config = [
        f"{gpu_names[k]}x{g}/{n}"
        for k, g, n in zip(
            c.gpu[col].tolist(), c.gpus[col].tolist(), c.nodes[col].tolist(), strict=True
        )
    ]
    model = Model(name)
    y = model.add_variables(
        "y",
        col.size,
        upper=classes.count[classes.owner],
        integer=integral,
        coords=(("job", [labels[g] for g in classes.owner]), ("config", config)),
    )
    ones = np.ones(col.size)
    pick = sp.csr_matrix((ones, (classes.owner, np.arange(col.size))), (classes.size, col.size))
    choose = model.add_constraints(
        "choose", {y: pick}, upper=classes.count, coords=(("job", labels),)
    )
    per_type = sp.csr_matrix(
        (c.gpus[col].astype(float), (c.gpu[col], np.arange(col.size))), (gpu_count.size, col.size)
    )
    capacity = model.add_constraints(
        "capacity", {y: per_type}, upper=free, coords=(("gpu", gpu_names),)
    )
    return ChoiceModel(model, y, choose, capacity, classes, jobs, free, tuning(presolve))


def chosen(choice: ChoiceModel, solution: Solution) -> IntArray:
    """Per job, the candidate it runs in (an index into `jobs.candidates`), −1 when it waits:
    each class's counts handed to its members in order; pinned jobs keep theirs."""
    jobs, classes = choice.jobs, choice.classes
    out = np.full(jobs.num_jobs, -1, dtype=np.int64)
    c = jobs.candidates
    held = np.flatnonzero(jobs.pinned[c.job])
    out[c.job[held]] = held
    counts = np.rint(solution.value(choice.y)).astype(np.int64)
    for g, members in enumerate(classes.members):
        lo, hi = classes.start[g], classes.start[g + 1]
        picks = np.repeat(classes.column[lo:hi], counts[lo:hi])[: members.size]
        out[members[: picks.size]] = picks
    return out


def shares(choice: ChoiceModel, solution: Solution) -> tuple[IntArray, IntArray, FloatArray]:
    """Time shares per (job, candidate): each member of a class gets y_gc / n_g of the time in
    its own copy of candidate c (members list the same candidates in the same order)."""
    classes, c = choice.classes, choice.jobs.candidates
    y = np.clip(solution.value(choice.y), 0.0, None) / classes.count[classes.owner]
    reps = classes.representative()
    offset = classes.column - c.start[reps][classes.owner]
    size = np.array([m.size for m in classes.members], dtype=np.int64)
    member = np.concatenate(classes.members) if classes.members else np.zeros(0, np.int64)
    # every (member, column of its class) pair
    per_class = np.diff(classes.start)
    pairs = size * per_class
    first_member = np.concatenate([[0], np.cumsum(size)])[:-1]
    job, col = [], []
    for g in np.flatnonzero(pairs).tolist():
        lo, hi = classes.start[g], classes.start[g + 1]
        mem = member[first_member[g] : first_member[g] + size[g]]
        job.append(np.repeat(mem, hi - lo))
        col.append(np.tile(np.arange(lo, hi), mem.size))
    jobs_of = np.concatenate(job) if job else np.zeros(0, np.int64)
    cols = np.concatenate(col) if col else np.zeros(0, np.int64)
    cand = c.start[jobs_of] + offset[cols]
    keep = y[cols] > SHARE_FLOOR
    return jobs_of[keep], cand[keep], y[cols][keep]
