"""`solve --explain` (the explanation in JSON, a `why` column in the table) and `solve compare`
(two snapshots or a patch; bad input is one line and exit code 2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli_runner import invoke

# a and b share one v100 (0.5 each); c runs all of its time on k80; `wide` fits nowhere.
SNAPSHOT: dict[str, Any] = {
    "gpu_types": [{"name": "v100", "count": 1}, {"name": "k80", "count": 3}],
    "jobs": [
        {"id": "a", "throughput": {"v100": 1}},
        {"id": "b", "throughput": {"v100": 1}},
        {"id": "c", "throughput": {"k80": 1}},
        {"id": "wide", "throughput": {"v100": 1}, "scale_factor": 4},
    ],
}


def write(tmp_path: Path, name: str, data: Any) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return str(path)


def test_explain_adds_the_block_to_json(tmp_path: Path) -> None:
    ran = invoke([write(tmp_path, "s.json", SNAPSHOT), "--explain", "--format", "json"])
    assert ran.exit_code == 0, ran.stderr
    explanation = json.loads(ran.stdout)["explanation"]
    codes = {j["id"]: j["code"] for j in explanation["jobs"]}
    assert codes == {
        "a": "capacity",
        "b": "capacity",
        "c": "full_time",
        "wide": "gang_does_not_fit",
    }
    plain = invoke([write(tmp_path, "s.json", SNAPSHOT), "--format", "json"])
    assert "explanation" not in json.loads(plain.stdout)


def test_the_table_explains_only_with_explain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "220")  # a wide terminal: no cell wraps
    path = write(tmp_path, "s.json", SNAPSHOT)
    explained = invoke([path, "--explain", "--format", "table"])
    assert explained.exit_code == 0, explained.stderr
    assert "why:" in explained.stdout and "runs all of its time" in explained.stdout
    price = next(line for line in explained.stdout.splitlines() if "capacity[v100]" in line)
    assert "binding" in price and "4.0000" in price
    plain = invoke([path, "--format", "table"])
    assert "runs all of its time" not in plain.stdout


def test_compare_with_a_patch(tmp_path: Path) -> None:
    before = write(tmp_path, "before.json", SNAPSHOT)
    patch = write(tmp_path, "patch.json", {"gpus": {"v100": 1}})
    ran = invoke(["compare", before, "--patch", patch, "--format", "json"])
    assert ran.exit_code == 0, ran.stderr
    answer = json.loads(ran.stdout)
    first = answer["jobs"][0]
    assert first["allocation_delta"] == {"v100": pytest.approx(0.5)}
    assert answer["unchanged"] == 1  # `wide` still fits nowhere
    table = invoke(["compare", before, "--patch", patch, "--format", "table"])
    assert "advisory" in table.stdout


def test_compare_two_snapshots(tmp_path: Path) -> None:
    after = {**SNAPSHOT, "jobs": SNAPSHOT["jobs"][1:]}
    ran = invoke(["compare", write(tmp_path, "a.json", SNAPSHOT), write(tmp_path, "b.json", after)])
    assert ran.exit_code == 0, ran.stderr
    changes = {j["id"]: j["change"] for j in json.loads(ran.stdout)["jobs"]}
    # without a, b has the v100 alone: its throughput doubles (0.5 → 1); c keeps its k80
    assert changes == {"a": "removed", "b": "gained"}


def test_compare_says_what_changed_for_each_job(tmp_path: Path) -> None:
    # One more v100: a and b go from 0.5 to 1 each (gained); c keeps its k80 but its share,
    # measured against the bigger cluster, changes (rescaled); `wide` still fits nowhere.
    before = write(tmp_path, "s.json", SNAPSHOT)
    ran = invoke(["compare", before, "--patch", '{"gpus": {"v100": 1}}', "--format", "json"])
    assert ran.exit_code == 0, ran.stderr
    jobs = {j["id"]: j for j in json.loads(ran.stdout)["jobs"]}
    assert {i: j["change"] for i, j in jobs.items()} == {
        "a": "gained",
        "b": "gained",
        "c": "rescaled",
    }
    assert jobs["c"]["allocation_delta"] == {} and jobs["c"]["throughput_delta"] == 0
    # no v100 left: a and b lose their half of it
    fewer = invoke(["compare", before, "--patch", '{"gpus": {"v100": -1}}', "--format", "json"])
    assert fewer.exit_code == 0, fewer.stderr
    changes = {j["id"]: j["change"] for j in json.loads(fewer.stdout)["jobs"]}
    assert changes["a"] == "lost" and changes["b"] == "lost"


def test_compare_takes_an_inline_patch_as_its_file(tmp_path: Path) -> None:
    before = write(tmp_path, "s.json", SNAPSHOT)
    patch = {"gpus": {"v100": 1}, "weights": {"a": 2}}
    inline = invoke(["compare", before, "--patch", json.dumps(patch), "--format", "json"])
    from_file = invoke(
        ["compare", before, "--patch", write(tmp_path, "p.json", patch), "--format", "json"]
    )
    assert inline.exit_code == 0, inline.stderr
    assert json.loads(inline.stdout)["jobs"] == json.loads(from_file.stdout)["jobs"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ([], "give AFTER or --patch"),
        (["--patch", "PATCH"], "patch.gpus.v100: leaves -2 GPUs"),
        (["--patch", "MISSING"], "nor inline JSON"),
        (["--patch", '{"gpus": '], "--patch is not valid JSON"),
        (["--patch", "[1, 2]"], "--patch is not a JSON object: it holds an array"),
    ],
)
def test_compare_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, extra: list[str], message: str
) -> None:
    patch = write(tmp_path, "patch.json", {"gpus": {"v100": -3}})
    args = [a.replace("PATCH", patch).replace("MISSING", str(tmp_path / "no.json")) for a in extra]
    ran = invoke(["compare", write(tmp_path, "s.json", SNAPSHOT), *args])
    assert ran.exit_code == 2
    assert message in ran.stderr and ran.stderr.count("\n") == 1


def test_a_job_on_other_gpus_at_the_same_throughput_is_moved(tmp_path: Path) -> None:
    # Its k80 swapped for a v100 it runs as fast on: same share, same throughput, other GPUs.
    alone = {
        "gpu_types": [{"name": "v100", "count": 0}, {"name": "k80", "count": 1}],
        "jobs": [{"id": "j", "throughput": {"v100": 1, "k80": 1}}],
    }
    swap = '{"gpus": {"k80": -1, "v100": 1}}'
    ran = invoke(["compare", write(tmp_path, "s.json", alone), "--patch", swap, "--format", "json"])
    assert ran.exit_code == 0, ran.stderr
    answer = json.loads(ran.stdout)
    assert [j["change"] for j in answer["jobs"]] == ["moved"] and answer["unchanged"] == 0
    assert answer["jobs"][0]["allocation_delta"] == {"k80": -1.0, "v100": 1.0}
