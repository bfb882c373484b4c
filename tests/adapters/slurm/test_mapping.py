"""The throughput table and the job → row convention: `--comment=model=KEY`, else the job
name; `weight=W` in the comment; a typed request pins the type; bad tables name the field."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from apportion.adapters.slurm.mapping import Mapped, Unmapped, check_columns, load_table, map_job
from apportion.adapters.slurm.slurmcli import parse_jobs
from apportion.solver.errors import InputError
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


def test_json_and_csv_tables_read_the_same(tmp_path: Path) -> None:
    as_json = tmp_path / "t.json"
    as_json.write_text('{"resnet50": {"v100": 400, "k80": 100}, "lm": {"v100": 30, "k80": 0}}')
    as_csv = tmp_path / "t.csv"
    as_csv.write_text("model,v100,k80\nresnet50,400,100\nlm,30,\n")
    expected = {"resnet50": {"v100": 400.0, "k80": 100.0}, "lm": {"v100": 30.0}}
    assert load_table(as_json) == load_table(as_csv) == expected


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("t.json", '{"lm": {"v100": -1}}', "throughputs.lm.v100: -1 is not a non-negative number"),
        ("t.json", '{"lm": {"v100": "fast"}}', "throughputs.lm.v100: 'fast' is not"),
        ("t.json", "[1, 2]", "throughputs: must map job keys to rows"),
        ("t.json", "model,v100\nlm,3\n", "is not JSON (Expecting value, line 1); use .csv"),
        ("t.csv", "model,v100\nlm,fast\n", "throughputs.lm.v100: 'fast' is not"),
        ("t.csv", "model,v100\nlm,3,4\n", "line 2 has 3 cells, the header 2"),
    ],
)
def test_a_bad_table_names_the_field(tmp_path: Path, name: str, text: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        load_table(path)
    assert message in caught.value.one_line()


def test_a_column_that_is_no_gpu_type_of_the_cluster_is_refused() -> None:
    check_columns(TABLE, ["v100", "k80", "p100"])  # a type no row uses is fine
    with pytest.raises(InputError) as caught:
        check_columns({"lm": {"v100": 1.0, "a100": 2.0}}, ["v100", "k80"])
    assert caught.value.one_line() == (
        "throughputs.lm.a100: not a GPU type of the cluster ['k80', 'v100']"
    )
