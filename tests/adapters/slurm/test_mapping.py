"""The job → row convention: `--comment=model=KEY`, else the job name; `weight=W` in the
comment; a typed request pins the type, an untyped one may run on any type of its row; bare
words in the comment are flags."""

from __future__ import annotations

from dataclasses import replace

from apportion.adapters.slurm.mapping import Mapped, Unmapped, comment_entries, map_job
from apportion.adapters.slurm.slurmcli import parse_jobs
from tests.adapters.slurm.samples import TABLE, squeue


def test_the_comment_names_the_row_else_the_job_name() -> None:
    jobs = {j.id: j for j in parse_jobs(squeue())}
    assert map_job(jobs["1"], TABLE) == Mapped("resnet50", {"v100": 400.0, "k80": 100.0}, 1.0)
    assert map_job(jobs["3"], TABLE) == Mapped("transformer", {"v100": 50.0, "k80": 10.0}, 1.0)
    # A typed request (`--gres=gpu:k80:4`) runs on K80 or nowhere; weight=2 from the comment.
    assert map_job(jobs["2"], TABLE) == Mapped("lm", {"k80": 12.0}, 2.0)


def test_jobs_that_cannot_be_mapped_say_why() -> None:
    jobs = {j.id: j for j in parse_jobs(squeue())}
    missing = map_job(jobs["6"], TABLE)
    assert isinstance(missing, Unmapped)
    assert "no throughput row for 'unknown-model' (its name)" in missing.reason
    assert "--comment=model=KEY" in missing.reason
    bad_weight = map_job(replace(jobs["1"], comment="model=lm weight=heavy"), TABLE)
    assert bad_weight == Unmapped("comment weight='heavy' is not a positive number")
    nowhere = map_job(replace(jobs["1"], requested_type="a100"), TABLE)
    assert nowhere == Unmapped("row 'resnet50' has no throughput on its requested type a100")


def test_an_untyped_request_may_run_on_every_type_of_its_row() -> None:
    jobs = {j.id: j for j in parse_jobs(squeue())}
    assert jobs["4"].requested_type is None  # --gres=gpu:1
    assert map_job(jobs["4"], TABLE).throughput == {"v100": 400.0, "k80": 100.0}  # type: ignore[union-attr]
    assert jobs["5"].requested_type == "k80"  # --gres=gpu:k80:8
    assert map_job(jobs["5"], TABLE).throughput == {"k80": 100.0}  # type: ignore[union-attr]


def test_comment_entries_and_flags() -> None:
    assert comment_entries("apportion,model=lm weight=2;x=") == {
        "apportion": "",
        "model": "lm",
        "weight": "2",
        "x": "",
    }
    assert comment_entries("free text (v2)") == {"free": "", "text": ""}
    # `model` without a value falls back to the job name.
    jobs = {j.id: j for j in parse_jobs(squeue())}
    assert map_job(replace(jobs["3"], comment="model"), TABLE).key == "transformer"  # type: ignore[union-attr]
