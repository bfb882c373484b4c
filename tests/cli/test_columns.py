"""`solve` with jobs as columns, run as a real subprocess: a columnar snapshot in, the answer
in either layout out, the table's first rows only, and bad columns as one line with exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import orjson

from apportion.refdata.synthetic import random_columns
from tests.cli.command import run

JOBS = 300


def columnar_file(tmp_path: Path, jobs: int = JOBS) -> Path:
    path = tmp_path / "columns.json"
    path.write_bytes(
        orjson.dumps(random_columns(jobs, 4, seed=3), option=orjson.OPT_SERIALIZE_NUMPY)
    )
    return path


def test_a_columnar_snapshot_is_answered_in_columns_or_rows_as_asked(tmp_path: Path) -> None:
    path = columnar_file(tmp_path)
    done = run(str(path), "--format", "json")
    assert done.returncode == 0, done.stderr
    jobs = json.loads(done.stdout)["jobs"]
    assert len(jobs["id"]) == JOBS and set(jobs["allocation"]) == {"gpu0", "gpu1", "gpu2", "gpu3"}
    x = np.array(list(jobs["allocation"].values())).T
    assert (x.sum(axis=1) <= 1 + 1e-9).all()
    out = tmp_path / "rows.json"
    done = run(str(path), "--jobs-layout", "rows", "--output", str(out), "--format", "json")
    assert done.returncode == 0 and done.stdout == ""
    rows = json.loads(out.read_text())["jobs"]
    assert [job["id"] for job in rows] == jobs["id"]
    for j in (0, 17, JOBS - 1):
        given = {k: v[j] for k, v in jobs["allocation"].items() if v[j] != 0}
        assert rows[j]["allocation"] == given
        assert rows[j]["effective_throughput"] == jobs["effective_throughput"][j]


def test_the_table_shows_the_first_rows_and_counts_the_rest(tmp_path: Path) -> None:
    wide = {"COLUMNS": "200"}
    done = run(str(columnar_file(tmp_path)), "--format", "table", env=wide)
    assert done.returncode == 0, done.stderr
    assert "job-99 " in done.stdout and "job-100 " not in done.stdout
    assert f"… {JOBS - 100} more jobs (use --format json)" in done.stdout


def test_a_bad_column_is_one_line_naming_the_column_and_row(tmp_path: Path) -> None:
    doc = random_columns(5, 2, seed=1)
    doc["jobs"]["weight"] = doc["jobs"]["weight"].tolist()
    doc["jobs"]["weight"][3] = -2
    doc["jobs"]["throughput"]["a100"] = [1.0] * 5
    path = tmp_path / "bad.json"
    path.write_bytes(orjson.dumps(doc, option=orjson.OPT_SERIALIZE_NUMPY))
    done = run(str(path))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert "snapshot.jobs.weight[3]: Input should be greater than 0" in lines[0]
    assert "snapshot.jobs.throughput.a100: unknown GPU type 'a100'" in lines[0]
