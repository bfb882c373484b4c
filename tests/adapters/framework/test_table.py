"""The throughput table: JSON or CSV read the same, bad tables name the row and column, and
every column must be a GPU type of the cluster."""

from __future__ import annotations

from pathlib import Path

import pytest

from apportion.adapters.framework.table import check_columns, load_table
from apportion.solver.errors import InputError

TABLE = {"resnet50": {"v100": 400.0, "k80": 100.0}, "lm": {"v100": 30.0, "k80": 12.0}}


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
