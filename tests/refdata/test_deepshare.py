"""DeepShare's published contention matrix loads as-is and gives back the paper's numbers."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from apportion.formulations.placement.contention import ContentionLookup, Source
from apportion.refdata import FIXTURES, SOURCE
from apportion.refdata.deepshare import main, read_contention_csv
from apportion.solver import InputError
from tests.cli_runner import invoke

MATRIX = SOURCE / "deepshare_shared_thp_ratio.csv"


@pytest.fixture(scope="module")
def lookup() -> ContentionLookup:
    return ContentionLookup(read_contention_csv(MATRIX))


def test_the_whole_matrix_loads() -> None:
    table = read_contention_csv(MATRIX)
    assert len(table.entries) == 36 * 36
    assert min(e.cs for e in table.entries) >= 1.0
    assert {e.target.workload_class for e in table.entries} == {
        "MobileNetV3",
        "GraphSage",
        "FSDP",
        "Transformer-XL",
        "DLRM",
        "MoE",
    }


@pytest.mark.parametrize(
    ("target", "co_runner", "paper"),
    [
        # §III, Fig. 1: MoE next to FSDP up to 3.00, FSDP next to MoE up to 1.96.
        (("MoE", 4, 4), ("FSDP", 8, 8), 3.00),
        (("FSDP", 8, 8), ("MoE", 8, 2), 1.96),
        (("FSDP", 4, 4), ("MoE", 8, 8), 1.96),
        # FSDP next to MobileNetV3 at most 1.35; MobileNetV3 next to FSDP 1.44 (paper: 1.43).
        (("FSDP", 4, 4), ("MobileNetV3", 8, 8), 1.35),
        (("MobileNetV3", 8, 4), ("FSDP", 8, 8), 1.44),
        # The file's largest value, an outlier the data README points out.
        (("DLRM", 8, 8), ("MobileNetV3", 2, 2), 8.13),
    ],
)
def test_paper_numbers(
    lookup: ContentionLookup, target: tuple, co_runner: tuple, paper: float
) -> None:
    found = lookup(target, co_runner)
    assert found.source is Source.EXACT
    assert round(found.cs, 2) == paper


def test_long_form_reads_the_same(tmp_path: Path) -> None:
    table = read_contention_csv(MATRIX)
    path = tmp_path / "long.csv"
    with path.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(
            [
                "target_model",
                "target_total_gpus",
                "target_num_nodes",
                "colocated_model",
                "colocated_total_gpus",
                "colocated_num_nodes",
                "shared_thp_ratio",
            ]
        )
        for e in table.entries[:50]:
            t, c = e.target, e.co_runner
            out.writerow([*t.key, *c.key, f"{1 / e.cs:.6f}"])
    long = read_contention_csv(path)
    assert [(e.target, e.co_runner) for e in long.entries] == [
        (e.target, e.co_runner) for e in table.entries[:50]
    ]
    assert [e.cs for e in long.entries] == pytest.approx([e.cs for e in table.entries[:50]])


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "is empty"),
        (',"A,2,2"\n"A,2,2",0.5,0.7\n', "expected 1"),
        (',"A,2,2"\n"A,2,2",-0.5\n', "must be positive"),
        (',"A,2"\n"A,2,2",0.5\n', "is not '<model>,<total GPUs>,<nodes>'"),
    ],
)
def test_bad_files_are_input_errors(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(InputError) as exc:
        read_contention_csv(path)
    assert exc.value.errors[0].loc == ("contention_csv",)
    assert words in exc.value.errors[0].msg


def test_conversion_command_prints_the_snapshot_field(capsys: pytest.CaptureFixture[str]) -> None:
    main([str(MATRIX)])
    table = json.loads(capsys.readouterr().out)
    assert len(table["entries"]) == 1296


def test_cli_takes_the_csv_as_is(tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    result = invoke(
        [
            str(FIXTURES / "deepshare_cluster.json"),
            "--contention-csv",
            str(MATRIX),
            "--output",
            str(out),
            "--format",
            "json",
            "-o",
            "w1=0.7",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["policy"] == "contention_placement"
    assert data["summary"]["cs_sources"].get("exact", 0) > 0
    assert data["summary"]["cs_sources"].get("default", 0) == 0


def test_cli_refuses_two_tables(tmp_path: Path) -> None:
    snapshot = json.loads((FIXTURES / "deepshare_cluster.json").read_text())
    snapshot["contention"] = {"entries": []}
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(snapshot))
    result = invoke([str(path), "--contention-csv", str(MATRIX)])
    assert result.exit_code == 2
    assert "contention" in result.output
